/**
 * Deliveries that must wait rather than fail: while the WhatsApp connection is down (not linked yet, logged out,
 * reconnecting, another instance holds it), a `deliver_message` job is held — the same job back to pending for later,
 * its attempt not counted (`JobHold`) — instead of being retried. A retry would spend one of the job's attempts each
 * time and, after a long outage, give the message up; the study's messages must all go out once the device is linked
 * again. Holding keeps ONE row per message however long the wait (re-queuing a copy every 30 s made 2,881 rows for
 * one greeting in a day) and keeps the participant's messages in their order. A hold that names its channel
 * (`wakeOn`) is woken as soon as that channel connects (`wakeHeldDeliveries`); its `deliveryHoldMs` is only the
 * safety net.
 */

import type { Clock } from '../../domain/clock.ts';
import { errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import type { JobHandler, JobHold } from '../../scheduling/job-runner.ts';
import type { Job, Store } from '../../store/store.ts';

/** An error (or an answer of `holdBefore`) that asks for the delivery to be held (`WhatsAppNotConnectedError`). */
export interface DeliveryHoldRequest {
  /** How long the delivery waits at most before it is tried again. */
  readonly deliveryHoldMs: number;
  /** The channel whose connection wakes the delivery before that (`JobRepository.wakeHeld`); none: it just waits. */
  readonly wakeOn?: string;
}

export function isDeliveryHoldRequest(error: unknown): error is Error & DeliveryHoldRequest {
  return error instanceof Error && typeof (error as Partial<DeliveryHoldRequest>).deliveryHoldMs === 'number';
}

export function withDeliveryHold(options: {
  handler: JobHandler;
  clock: Clock;
  log: Log;
  /**
   * Asked first: a hold (without even trying) when the channel is known to be disconnected, so a long outage does
   * not log a failed delivery every few seconds. Undefined: try the delivery.
   */
  holdBefore?: (job: Job) => DeliveryHoldRequest | undefined;
}): JobHandler {
  const { handler, clock, log } = options;
  function hold(job: Job, request: DeliveryHoldRequest, reason: string): JobHold {
    const until = new Date(clock.now().getTime() + request.deliveryHoldMs);
    log.info(
      { jobId: job.id, until: until.toISOString(), wakeOn: request.wakeOn, reason },
      'delivery held until the channel is connected',
    );
    return { hold: { until, ...(request.wakeOn === undefined ? {} : { wakeOn: request.wakeOn }) } };
  }
  return async (job) => {
    const before = options.holdBefore?.(job);
    if (before) return hold(job, before, 'the channel is not connected');
    try {
      return await handler(job);
    } catch (error) {
      if (!isDeliveryHoldRequest(error)) throw error;
      return hold(job, error, error.message);
    }
  };
}

/**
 * Makes the deliveries held for `channel` due now (its connection just opened) and tells the runner. Never rejects:
 * a failed wake-up is logged, and the held deliveries are tried at the end of their hold anyway.
 */
export async function wakeHeldDeliveries(options: {
  store: Pick<Store, 'jobs'>;
  clock: Clock;
  log: Log;
  channel: string;
  notify: () => void;
}): Promise<void> {
  const { store, clock, log, channel } = options;
  try {
    const woken = await store.jobs.wakeHeld(channel, clock.now());
    if (woken === 0) return;
    log.info({ channel, woken }, 'held deliveries woken: the channel is connected');
    options.notify();
  } catch (error) {
    log.error({ channel, error: errorMessage(error) }, 'could not wake the held deliveries');
  }
}
