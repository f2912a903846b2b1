/**
 * Deliveries that must wait rather than fail: while the WhatsApp connection is down (not linked yet, logged out,
 * reconnecting, another instance holds it), a `deliver_message` job is re-queued as a fresh job for later instead of
 * being retried. A retry would spend one of the job's attempts each time and, after a long outage, give the message
 * up; the study's messages must all go out once the device is linked again. The message keeps its id, so the
 * channel's own de-duplication still applies.
 */
import type { NewId } from '../../domain/ids.ts';
import type { Log } from '../../observability/log.ts';
import type { Clock } from '../../scheduling/clock.ts';
import type { JobHandler } from '../../scheduling/job-runner.ts';
import type { Job, Store } from '../../store/store.ts';

/** An error that asks for the delivery to be held (`WhatsAppNotConnectedError`). */
export interface DeliveryHoldRequest {
  readonly deliveryHoldMs: number;
}

export function isDeliveryHoldRequest(error: unknown): error is Error & DeliveryHoldRequest {
  return error instanceof Error && typeof (error as Partial<DeliveryHoldRequest>).deliveryHoldMs === 'number';
}

export function withDeliveryHold(options: {
  handler: JobHandler;
  store: Pick<Store, 'jobs'>;
  clock: Clock;
  newId: NewId;
  log: Log;
  /**
   * Asked first: a hold (without even trying) when the channel is known to be disconnected, so a long outage does
   * not log a failed delivery every few seconds. Undefined: try the delivery.
   */
  holdBefore?: (job: Job) => DeliveryHoldRequest | undefined;
}): JobHandler {
  const { handler, store, clock, newId, log } = options;
  return async (job) => {
    try {
      const hold = options.holdBefore?.(job);
      if (hold) throw Object.assign(new Error('the channel is not connected'), hold);
      return await handler(job);
    } catch (error) {
      if (!isDeliveryHoldRequest(error)) throw error;
      const now = clock.now();
      const runAt = new Date(now.getTime() + error.deliveryHoldMs);
      const held = await store.jobs.enqueue(
        {
          id: newId('job'),
          kind: job.kind,
          ...(job.participantId ? { participantId: job.participantId } : {}),
          runAt,
          payload: { ...job.payload, heldFrom: job.payload['heldFrom'] ?? job.id },
          maxAttempts: job.maxAttempts,
        },
        now,
      );
      log.info(
        { jobId: job.id, heldAs: held.id, runAt: runAt.toISOString(), reason: error.message },
        'delivery held until the channel is connected',
      );
    }
  };
}
