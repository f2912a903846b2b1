/**
 * Paced greetings: a bulk import enqueues one `enroll_greeting` job per new participant, spread
 * `60 000 / ENROLL_GREETING_RATE` ms apart, so a study of 300 is not greeted (and the model not called) all at once.
 * The handler generates the greeting, which goes out through the outbox like every message.
 */
import type { NewId } from '../../domain/ids.ts';
import type { ConversationFlow } from '../../engine/conversation-flow.ts';
import type { JobHandler } from '../../scheduling/job-runner.ts';
import type { JobRepository } from '../../store/ports/job-queue.ts';

export const ENROLL_GREETING_JOB = 'enroll_greeting';

/** The instant of the `index`-th greeting (0 = now) at `ratePerMinute`. */
export function pacedAt(start: Date, index: number, ratePerMinute: number): Date {
  return new Date(start.getTime() + Math.round((index * 60_000) / ratePerMinute));
}

export async function enqueueGreetings(
  jobs: Pick<JobRepository, 'enqueue'>,
  participantIds: readonly string[],
  options: { now: Date; ratePerMinute: number; newId: NewId; startIndex?: number },
): Promise<void> {
  for (const [index, participantId] of participantIds.entries()) {
    await jobs.enqueue(
      {
        id: options.newId('job'),
        kind: ENROLL_GREETING_JOB,
        participantId,
        runAt: pacedAt(options.now, index + (options.startIndex ?? 0), options.ratePerMinute),
        payload: { participant_id: participantId },
        dedupKey: `${ENROLL_GREETING_JOB}:${participantId}`,
      },
      options.now,
    );
  }
}

export function createGreetingHandler(flow: Pick<ConversationFlow, 'greet'>): JobHandler {
  return async (job) => {
    if (!job.participantId) return;
    await flow.greet(job.participantId);
  };
}
