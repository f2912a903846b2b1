/**
 * Staff take over a conversation: the coach stops answering the participant, whose messages are recorded (transcript
 * and working history) for staff to read; staff replies go out on the participant's channel and into the working
 * history marked as a person's, so after the hand-back the coach knows a person spoke and what was said. Nothing is
 * made up: the history holds what the participant and the staff member actually wrote.
 *
 * A taken-over conversation with no staff message for `idleAfterMs` raises one `takeover-idle` alert per quiet
 * spell (a `takeover_idle` job, moved on by every staff message).
 *
 * A participant's message in a taken-over conversation raises a `takeover-message` notification for the staff member
 * who took it over: on the dashboard only (the alerts inbox and every page's live count; no e-mail or webhook, which
 * would send one alert per message of a running conversation; a staff member who walked away is reached by the
 * `takeover-idle` reminder, which goes on every route). One unread (open) notification at a time: later messages
 * join it, a message after staff acknowledged it raises a new one, and the next staff message or the hand-back
 * resolves them.
 */

import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import type { ConversationMessage } from '../domain/history.ts';
import type { NewId } from '../domain/ids.ts';
import { appendToHistory } from '../engine/conversation-history.ts';
import type { Messenger, Outgoing, SentMessage } from '../engine/messenger.ts';
import type { Takeover } from '../store/safety-records.ts';
import type { InboundMessage, Job, NewTranscriptEntry, Store } from '../store/store.ts';
import { type AlertService, TAKEOVER_MESSAGE_ALERT } from './alert-service.ts';
import { recordUnansweredInbound } from './unanswered-inbound.ts';

export const TAKEOVER_IDLE_JOB = 'takeover_idle';
/** A notification's rule names whom it is for: one open notification per staff member and conversation. */
const notificationRule = (takenBy: string) => `for ${takenBy}`;
/** How a staff message appears in the working history the model reads. */
export const STAFF_MESSAGE_MARK = '[A member of the study team wrote to the participant]';
const idleKey = (participantId: string) => `${TAKEOVER_IDLE_JOB}:${participantId}`;

export interface TakeoverService {
  takeOver(participantId: string, by: string, timers: Takeover['timers']): Promise<Takeover>;
  /** Throws `conflict` unless the conversation is taken over. */
  staffMessage(participantId: string, by: string, message: Outgoing): Promise<SentMessage>;
  handBack(participantId: string, by: string): Promise<Takeover>;
  /** The inbound pipeline: true when the message was recorded for staff (the coach does not answer it). */
  intercept(inbound: InboundMessage): Promise<boolean>;
  /** The `takeover_idle` job. */
  remindIfIdle(job: Job): Promise<void>;
}

function historyText(message: Outgoing): string {
  return message.type === 'text'
    ? message.text
    : `${message.question}\n${message.options.map((option, index) => `${index + 1}. ${option}`).join('\n')}`;
}

export function createTakeoverService(options: {
  store: Store;
  clock: Clock;
  newId: NewId;
  messenger: Pick<Messenger, 'send'>;
  alerts: AlertService;
  /** `TAKEOVER_IDLE_AFTER`. */
  idleAfterMs: number;
  transcriptEntry: (inbound: InboundMessage) => NewTranscriptEntry;
  onEnqueued?: () => void;
  /** After a participant's message was recorded for staff (the dashboard's live notification). */
  onParticipantMessage?: (participantId: string) => void;
}): TakeoverService {
  const { store, clock, newId } = options;

  // The helpers below read and write through the service's store: called inside one of the service's units of work,
  // they join it.
  async function armIdleReminder(participantId: string, from: Date): Promise<void> {
    await store.jobs.enqueue(
      {
        id: newId('job'),
        kind: TAKEOVER_IDLE_JOB,
        participantId,
        runAt: new Date(from.getTime() + options.idleAfterMs),
        payload: {},
        dedupKey: idleKey(participantId),
      },
      clock.now(),
    );
    store.afterCommit(() => options.onEnqueued?.());
  }

  /** The participant's notifications for this staff member not yet resolved (an acknowledged one is still unresolved). */
  async function unresolvedNotifications(takeover: Takeover) {
    const rule = notificationRule(takeover.takenBy);
    return (await store.alerts.list({ participantId: takeover.participantId, limit: 1000 })).filter(
      (alert) => alert.kind === TAKEOVER_MESSAGE_ALERT && alert.rule === rule && alert.status !== 'resolved',
    );
  }

  /** The staff member answered or handed back: the notifications of the participant's messages are read. */
  async function settleNotifications(takeover: Takeover, by: string, note: string, now: Date) {
    for (const notification of await unresolvedNotifications(takeover)) {
      if (!(await store.alerts.resolve(notification.id, by, note, now))) continue;
      await store.events.record({
        participantId: takeover.participantId,
        type: 'alert-resolved',
        data: { alert_id: notification.id, by, note, review_ended: false, held_turn: null },
        createdAt: now,
      });
    }
  }

  /** The `takeover-message` notification, unless one for this staff member is still unread (open). */
  async function notify(takeover: Takeover): Promise<void> {
    const rule = notificationRule(takeover.takenBy);
    if ((await unresolvedNotifications(takeover)).some((alert) => alert.status === 'open')) return;
    await options.alerts.raise({
      participantId: takeover.participantId,
      kind: TAKEOVER_MESSAGE_ALERT,
      detector: 'takeover',
      rule,
      score: undefined,
      urgency: 'normal',
      reason: `the participant wrote in the conversation ${takeover.takenBy} took over; reply on their safety page`,
      sourceMessageId: undefined,
      review: false,
      dashboardOnly: true,
    });
  }

  async function current(participantId: string): Promise<Takeover> {
    const takeover = await store.takeovers.get(participantId);
    if (!takeover) throw new AppError('conflict', `the conversation of ${participantId} is not taken over`);
    return takeover;
  }

  return {
    async takeOver(participantId, by, timers) {
      if (!(await store.participants.get(participantId))) {
        throw new AppError('not_found', `participant ${participantId} not found`);
      }
      const now = clock.now();
      const takeover: Takeover = { participantId, takenBy: by, startedAt: now, timers, lastStaffMessageAt: now };
      await store.transaction(async () => {
        if (!(await store.takeovers.begin(takeover))) {
          throw new AppError('conflict', `the conversation of ${participantId} is already taken over`);
        }
        await armIdleReminder(participantId, now);
        await store.events.record({
          participantId,
          type: 'conversation-taken-over',
          data: { by, timers },
          createdAt: now,
        });
      });
      return takeover;
    },

    async staffMessage(participantId, by, message) {
      const takeover = await current(participantId);
      return store.transaction(async () => {
        const now = clock.now();
        await settleNotifications(takeover, by, 'answered with a staff message', now);
        const sent = await options.messenger.send(participantId, message, { kind: 'organiser', module: 'staff' });
        const entry: ConversationMessage = {
          role: 'assistant',
          content: `${STAFF_MESSAGE_MARK} ${historyText(message)}`,
          timestamp: now.toISOString(),
        };
        await appendToHistory(store, participantId, [entry]);
        await store.takeovers.staffMessageSent(participantId, now);
        await armIdleReminder(participantId, now);
        await store.events.record({
          participantId,
          type: 'staff-message-sent',
          data: { by, outbound_id: sent.id, type: message.type },
          createdAt: now,
        });
        return sent;
      });
    },

    async handBack(participantId, by) {
      return store.transaction(async () => {
        const now = clock.now();
        const ended = await store.takeovers.end(participantId);
        if (!ended) throw new AppError('conflict', `the conversation of ${participantId} is not taken over`);
        await settleNotifications(ended, by, 'handed back to the coach', now);
        await store.jobs.cancelByKey(idleKey(participantId), now);
        await store.events.record({
          participantId,
          type: 'conversation-handed-back',
          data: { by, taken_by: ended.takenBy, started_at: ended.startedAt.toISOString() },
          createdAt: now,
        });
        return ended;
      });
    },

    async intercept(inbound) {
      const takeover = await store.takeovers.get(inbound.participantId);
      if (!takeover) return false;
      await store.transaction(async () => {
        const now = clock.now();
        const entry = options.transcriptEntry(inbound);
        await recordUnansweredInbound(store, inbound, entry, 'message-received-during-takeover', now);
        await notify(takeover);
        await store.inbound.markProcessed(inbound.id, now);
        store.afterCommit(() => options.onParticipantMessage?.(inbound.participantId));
      });
      return true;
    },

    async remindIfIdle(job) {
      const participantId = job.participantId;
      if (!participantId) return;
      const takeover = await store.takeovers.get(participantId);
      if (!takeover) return;
      const quietSince = takeover.lastStaffMessageAt;
      if (clock.now().getTime() - quietSince.getTime() < options.idleAfterMs) return;
      await store.transaction(async () => {
        await options.alerts.raise({
          participantId,
          kind: 'takeover-idle',
          detector: 'takeover',
          rule: `no staff message since ${quietSince.toISOString()}`,
          score: undefined,
          urgency: 'normal',
          reason: `${takeover.takenBy} took over this conversation and no staff message has been sent since ${quietSince.toISOString()}; reply or hand it back to the coach`,
          sourceMessageId: undefined,
          review: false,
        });
      });
    },
  };
}
