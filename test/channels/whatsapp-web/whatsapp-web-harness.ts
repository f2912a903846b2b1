import { createInProcessLease } from '../../../src/channels/whatsapp-web/connection-lease.ts';
import { linkDevice } from '../../../src/channels/whatsapp-web/device-linking.ts';
import {
  createWhatsAppWebChannel,
  type WhatsAppWebChannel,
  type WhatsAppWebChannelOptions,
} from '../../../src/channels/whatsapp-web/whatsapp-web-channel.ts';
import { AppError } from '../../../src/domain/errors.ts';
import type { ChannelInboundMessage, InboundReceipt } from '../../../src/inbound/inbound-port.ts';
import { silentLog } from '../../../src/observability/log.ts';
import { systemClock } from '../../../src/scheduling/clock.ts';
import type { Store } from '../../../src/store/store.ts';
import type { FakeWhatsApp } from '../../support/fake-whatsapp-socket.ts';

/** Links the fake account into `store` the way `promptpipe whatsapp login` does (QR shown, phone scans it). */
export async function linkFakeAccount(store: Store, whatsapp: FakeWhatsApp, session = 'default'): Promise<void> {
  await linkDevice({
    auth: store.whatsappAuth,
    session,
    clock: systemClock,
    socketFactory: whatsapp.factory,
    lease: createInProcessLease(),
    log: silentLog,
    onQr: () => setImmediate(() => whatsapp.link()),
    onPairingCode: () => undefined,
    timeoutMs: 10_000,
  });
}

/** Records what reaches the inbound pipeline; numbers in `enrolled` are known participants. */
export function createRecordingReceiver(enrolled: string[]) {
  const received: ChannelInboundMessage[] = [];
  const seen = new Set<string>();
  return {
    received,
    async receive(message: ChannelInboundMessage): Promise<InboundReceipt> {
      if (!enrolled.includes(message.from)) throw new AppError('not_found', `no participant ${message.from}`);
      const duplicate = message.providerMessageId !== undefined && seen.has(message.providerMessageId);
      if (message.providerMessageId) seen.add(message.providerMessageId);
      if (!duplicate) received.push(message);
      return { inboundId: `in_${received.length}`, participantId: `participant_${message.from}`, duplicate };
    },
  };
}

export function startChannel(
  store: Store,
  whatsapp: FakeWhatsApp,
  overrides: Partial<WhatsAppWebChannelOptions> = {},
): WhatsAppWebChannel {
  const channel = createWhatsAppWebChannel({
    store,
    clock: systemClock,
    log: silentLog,
    socketFactory: whatsapp.factory,
    lease: createInProcessLease(),
    backoff: () => 20,
    pollMs: 50,
    deliveryHoldMs: 1_000,
    ...overrides,
  });
  return channel;
}
