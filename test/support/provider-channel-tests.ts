/**
 * What the provider adapters' tests share (Twilio, WhatsApp Cloud): the outbound message they send, and an API harness
 * with the provider's webhook routes.
 */
import type { FastifyPluginAsync } from 'fastify';
import type { OutboundMessage } from '../../src/channels/channel.ts';
import { createDeliveryReceipts, type DeliveryReceipts } from '../../src/channels/delivery-receipts.ts';
import type { InboundService } from '../../src/inbound/inbound-port.ts';
import { silentLog } from '../../src/observability/log.ts';
import { type ApiHarness, createApiHarness } from './api-harness.ts';

/** A text to +15551230001 (out_1 of participant p_1), with the test's changes. */
export function outboundMessage(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  return { id: 'out_1', participantId: 'p_1', to: '+15551230001', kind: 'text', text: 'Hello there', ...overrides };
}

/**
 * An API harness serving a provider's webhook routes, built from its inbound service and delivery receipts that are
 * recorded as the server records them (without metrics).
 */
export function providerWebhookHarness(
  routes: (deps: { inbound: InboundService; receipts: DeliveryReceipts }) => FastifyPluginAsync,
): Promise<ApiHarness> {
  return createApiHarness({
    extraChannelRoutes: ({ inbound, store, clock }) => [
      routes({
        inbound,
        receipts: createDeliveryReceipts({ store, clock, metrics: { recordDeliveryStatus: () => {} }, log: silentLog }),
      }),
    ],
  });
}
