/**
 * Adherence alerts: "N daily prompts in a row without an answer" (`ADHERENCE_MISSED_PROMPTS`) and "no message from
 * the participant for D days" (`ADHERENCE_SILENT_DAYS`) raise a staff alert once per episode. An episode is the time
 * since the participant's last message: its start is part of the alert's rule, so the same silence never raises a
 * second alert (even after staff resolved the first), and the participant's next message starts a new episode.
 *
 * A study-wide `adherence_check` job looks at every active participant every `ADHERENCE_CHECK_EVERY` and re-arms
 * itself; nothing is checked when neither rule is set.
 */

import type { Clock } from '../domain/clock.ts';
import { errorMessage } from '../domain/errors.ts';
import type { NewId } from '../domain/ids.ts';
import type { Log } from '../domain/log.ts';
import { type Participant, ParticipantStatus } from '../domain/participant.ts';
import type { Store } from '../store/store.ts';
import type { AlertService } from './alert-service.ts';

export const ADHERENCE_CHECK_JOB = 'adherence_check';
const CHECK_KEY = ADHERENCE_CHECK_JOB;
/** How far back the participant's last message is looked for; beyond it, the enrolment time counts. */
const RECENT_ENTRIES = 500;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Each rule's alert names its rule and the episode's start: what makes an alert once per episode, and what the
 * roster's filter finds (ADHERENCE_RULE_PATTERNS in store/ports/roster-reads.ts, held to these words by a test).
 */
export const adherenceRuleText = {
  missedPrompts: (count: number, since: Date) => `${count} daily prompts unanswered since ${since.toISOString()}`,
  silentDays: (days: number, since: Date) => `no message for ${days} days since ${since.toISOString()}`,
};

export interface AdherenceRules {
  missedPrompts: number | undefined;
  silentDays: number | undefined;
  checkEveryMs: number;
}

export function createAdherenceAlerts(options: {
  store: Store;
  clock: Clock;
  newId: NewId;
  log: Log;
  alerts: AlertService;
  rules: AdherenceRules;
  onEnqueued?: () => void;
}) {
  const { store, clock, newId, log, alerts, rules } = options;
  const enabled = rules.missedPrompts !== undefined || rules.silentDays !== undefined;

  async function arm(after: Date): Promise<void> {
    await store.jobs.enqueue(
      {
        id: newId('job'),
        kind: ADHERENCE_CHECK_JOB,
        runAt: new Date(after.getTime() + rules.checkEveryMs),
        payload: {},
        dedupKey: CHECK_KEY,
      },
      clock.now(),
    );
    options.onEnqueued?.();
  }

  async function lastMessageAt(participant: Participant): Promise<Date> {
    const recent = await store.transcript.list(participant.id, { limit: RECENT_ENTRIES });
    return (
      recent.findLast((entry) => entry.role === 'user' && entry.kind === 'message')?.createdAt ?? participant.enrolledAt
    );
  }

  async function raiseOnce(participant: Participant, rule: string, reason: string): Promise<void> {
    const earlier = await store.alerts.list({ participantId: participant.id, limit: 1000 });
    if (earlier.some((alert) => alert.kind === 'adherence' && alert.rule === rule)) return;
    await alerts.raise({
      participantId: participant.id,
      kind: 'adherence',
      detector: 'adherence',
      rule,
      score: undefined,
      urgency: 'normal',
      reason,
      sourceMessageId: undefined,
      review: false,
    });
  }

  async function check(participant: Participant, now: Date): Promise<void> {
    const since = await lastMessageAt(participant);
    if (rules.missedPrompts !== undefined) {
      const sent = await store.events.list({ participantId: participant.id, type: 'prompt-sent' });
      const missed = sent.filter((event) => event.createdAt.getTime() > since.getTime()).length;
      if (missed >= rules.missedPrompts) {
        await raiseOnce(
          participant,
          adherenceRuleText.missedPrompts(rules.missedPrompts, since),
          `${missed} daily prompts in a row without an answer`,
        );
      }
    }
    if (rules.silentDays !== undefined && now.getTime() - since.getTime() >= rules.silentDays * DAY_MS) {
      await raiseOnce(
        participant,
        adherenceRuleText.silentDays(rules.silentDays, since),
        `no message from the participant since ${since.toISOString()}`,
      );
    }
  }

  return {
    /** Arms the first check (start-up); a pending check is kept. */
    async start(): Promise<void> {
      if (!enabled || (await store.jobs.getPendingByKey(CHECK_KEY))) return;
      await arm(clock.now());
    },
    /** The `adherence_check` job. */
    async run(): Promise<void> {
      const now = clock.now();
      if (!enabled) return;
      for (const participant of await store.participants.list({ status: ParticipantStatus.ACTIVE })) {
        // One participant's failure must not stop the check of the others.
        await check(participant, now).catch((error: unknown) =>
          log.error({ participantId: participant.id, error: errorMessage(error) }, 'adherence check failed'),
        );
      }
      await arm(now);
    },
  };
}
