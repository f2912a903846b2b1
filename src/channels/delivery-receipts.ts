/**
 * Delivery receipts: what became of each outbound message. Every status is appended to the `deliveries` log (the
 * transcript stays append-only), counted in `promptpipe_delivery_status_total{channel,status}`, and a failure is also
 * a `delivery-failed` event so it shows up in the participant's audit trail.
 */

import type { Clock } from '../domain/clock.ts';
import type { Log } from '../domain/log.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { NewDeliveryRecord, Store } from '../store/store.ts';
import type { DeliveryReceipt } from './channel.ts';

const FAILED_STATUSES = new Set(['failed', 'undelivered']);

export interface DeliveryReceipts {
  /**
   * Records a status of one of our outbound messages (sent, failed…) as the outbox learns it: in the caller's unit of
   * work when one is open (the delivery job's completion, see `JobCompletion`), else in its own.
   */
  record(delivery: Omit<NewDeliveryRecord, 'createdAt'> & { createdAt?: Date }): Promise<void>;
  /**
   * A provider's receipt: matched to our outbound message by the provider's id. False when the id is not one of ours
   * (another system's message on a shared number): nothing is recorded.
   */
  receive(receipt: DeliveryReceipt): Promise<boolean>;
}

export function createDeliveryReceipts(options: {
  store: Store;
  clock: Clock;
  metrics: Pick<Metrics, 'recordDeliveryStatus'>;
  log: Log;
}): DeliveryReceipts {
  const { store, clock, metrics, log } = options;

  async function record(delivery: Omit<NewDeliveryRecord, 'createdAt'> & { createdAt?: Date }): Promise<void> {
    const createdAt = delivery.createdAt ?? clock.now();
    await store.transaction(async () => {
      await store.deliveries.record({ ...delivery, createdAt });
      if (FAILED_STATUSES.has(delivery.status)) {
        await store.events.record({
          ...(delivery.participantId ? { participantId: delivery.participantId } : {}),
          type: 'delivery-failed',
          data: {
            outbound_id: delivery.outboundId,
            channel: delivery.channel,
            status: delivery.status,
            error_code: delivery.errorCode ?? null,
            error: delivery.errorMessage ?? null,
          },
          createdAt,
        });
      }
    });
    metrics.recordDeliveryStatus(delivery.channel, delivery.status);
  }

  return {
    record,
    async receive(receipt) {
      const sent = await store.deliveries.findByProviderId(receipt.channel, receipt.providerMessageId);
      if (!sent) {
        log.info({ channel: receipt.channel, status: receipt.status }, 'receipt for an unknown message ignored');
        return false;
      }
      await record({
        outboundId: sent.outboundId,
        channel: receipt.channel,
        providerMessageId: receipt.providerMessageId,
        status: receipt.status,
        ...(sent.participantId ? { participantId: sent.participantId } : {}),
        ...(receipt.errorCode ? { errorCode: receipt.errorCode } : {}),
        ...(receipt.errorMessage ? { errorMessage: receipt.errorMessage } : {}),
        ...(receipt.at ? { createdAt: receipt.at } : {}),
      });
      return true;
    },
  };
}
