/**
 * A delivery the participant refused (`RecipientOptedOutError`: they blocked the Telegram bot) withdraws them, the
 * same opt-out as STOP. The refusal is learnt inside a delivery, which runs under the participant's lock, while
 * withdrawing takes that lock itself; so the delivery queues a `recipient_opt_out` job in the transaction that ends
 * it (nothing lost in between), and the job, run without the lock, withdraws the participant.
 */
import type { NewId } from '../domain/ids.ts';
import type { OptOutHandler } from '../inbound/opt-out.ts';
import type { JobHandler } from '../scheduling/job-runner.ts';
import type { StoreRepositories } from '../store/store.ts';

export const RECIPIENT_OPT_OUT_JOB = 'recipient_opt_out';

/** Who refused which delivery on which channel, and the provider's words. */
export interface RecipientRefusal {
  participantId: string;
  channel: string;
  outboundId: string;
  reason: string;
}

/**
 * Queues the opt-out through `store` (the routed store, so it joins the unit of work that ends the delivery); one
 * pending per participant (a prompt and its poll both refused → one opt-out).
 */
export async function queueRecipientOptOut(
  store: Pick<StoreRepositories, 'jobs'>,
  refusal: RecipientRefusal,
  options: { now: Date; newId: NewId },
): Promise<void> {
  await store.jobs.enqueue(
    {
      id: options.newId('job'),
      kind: RECIPIENT_OPT_OUT_JOB,
      participantId: refusal.participantId,
      runAt: options.now,
      payload: { ...refusal },
      dedupKey: `${RECIPIENT_OPT_OUT_JOB}:${refusal.participantId}`,
    },
    options.now,
  );
}

/** Register with `{ lock: false }`: withdrawing takes the participant's lock itself. */
export function createRecipientOptOutHandler(optOut: Pick<OptOutHandler, 'recipientRefused'>): JobHandler {
  return async (job) => {
    const { participantId, channel, reason } = job.payload as Partial<RecipientRefusal>;
    if (typeof participantId !== 'string' || typeof channel !== 'string') return;
    await optOut.recipientRefused({ participantId, channel, reason: typeof reason === 'string' ? reason : '' });
  };
}
