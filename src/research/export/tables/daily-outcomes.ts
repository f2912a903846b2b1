/**
 * The per-participant, per-study-day summary an analyst starts from, derived from one participant's events and
 * transcript. A study day is the span from one daily prompt (`prompt-sent`) to the next.
 */
import { Temporal } from 'temporal-polyfill';
import { DONE_POLL } from '../../../domain/polls.ts';
import { DAILY_PROMPT_REMINDER_MESSAGE } from '../../../scheduling/timers/daily-prompt-reminder.ts';
import type { StoredEvent, TranscriptEntry } from '../../../store/ports/conversation-store.ts';
import { parsePollText } from '../../stats/poll-text-parse.ts';

export type DoneAnswer = 'Done' | 'Next time' | 'no answer';

export interface DailyOutcome {
  participantId: string;
  localDate: string;
  timezone: string;
  promptSentAt: Date;
  promptText: string;
  firstReplyAt: Date | undefined;
  answer: DoneAnswer;
  reminderSentAt: Date | undefined;
  intensityAtPrompt: string;
  intensityChange: string | undefined;
  feedbackBarrier: string | undefined;
  feedbackTweak: string | undefined;
}

/** Collects what a participant's study days need, one event or transcript entry at a time. */
export class DailyOutcomeCollector {
  private readonly prompts: { at: Date; localDate: string; text: string }[] = [];
  private readonly userMessages: { at: Date; content: string }[] = [];
  private readonly reminders: Date[] = [];
  private readonly intensities: { at: Date; from: string; to: string }[] = [];
  private readonly feedback: { at: Date; barrier?: string; tweak?: string }[] = [];

  addEvent(event: StoredEvent): void {
    const data = event.data;
    if (event.type === 'prompt-sent') {
      this.prompts.push({
        at: event.createdAt,
        localDate: String(data['local_date'] ?? ''),
        text: String(data['prompt'] ?? ''),
      });
    } else if (event.type === 'poll-answered' && data['kind'] === 'intensity-changed') {
      this.intensities.push({ at: event.createdAt, from: String(data['from']), to: String(data['to']) });
    } else if (event.type === 'poll-answered' && data['kind'] === 'intensity-kept') {
      const level = String(data['intensity']);
      this.intensities.push({ at: event.createdAt, from: level, to: level });
    } else if (event.type === 'tool-called' && data['name'] === 'save_user_profile') {
      const args = (data['arguments'] ?? {}) as Record<string, unknown>;
      const barrier = args['last_barrier'] ?? args['last_blocker'];
      const tweak = args['last_tweak'];
      if (typeof barrier === 'string' || typeof tweak === 'string') {
        this.feedback.push({
          at: event.createdAt,
          ...(typeof barrier === 'string' ? { barrier } : {}),
          ...(typeof tweak === 'string' ? { tweak } : {}),
        });
      }
    }
  }

  addEntry(entry: TranscriptEntry): void {
    if (entry.role === 'user' && entry.kind === 'message') {
      this.userMessages.push({ at: entry.createdAt, content: entry.content });
    } else if (entry.kind === 'proactive' && entry.content === DAILY_PROMPT_REMINDER_MESSAGE) {
      this.reminders.push(entry.createdAt);
    }
  }

  outcomes(participantId: string, timezone: string, initialIntensity: string): DailyOutcome[] {
    const prompts = [...this.prompts].sort((a, b) => a.at.getTime() - b.at.getTime());
    return prompts.map((prompt, index) => {
      const start = prompt.at.getTime();
      const end = prompts[index + 1]?.at.getTime() ?? Number.POSITIVE_INFINITY;
      const within = (at: Date): boolean => at.getTime() >= start && at.getTime() < end;
      const messages = this.userMessages.filter((message) => within(message.at));
      const answers = messages.flatMap((message) => {
        const poll = parsePollText(message.content);
        if (poll?.question === DONE_POLL.question) return [poll.option];
        const bare = DONE_POLL.options.find((option) => option.toLowerCase() === message.content.trim().toLowerCase());
        return bare ? [bare] : [];
      });
      const answer: DoneAnswer = answers.includes('Done') ? 'Done' : answers.length > 0 ? 'Next time' : 'no answer';
      const before = this.intensities.filter((change) => change.at.getTime() < start).at(-1);
      const first = this.intensities[0];
      const change = this.intensities.find((item) => within(item.at));
      const barrier = this.feedback.filter((item) => within(item.at) && item.barrier).at(-1)?.barrier;
      const tweak = this.feedback.filter((item) => within(item.at) && item.tweak).at(-1)?.tweak;
      return {
        participantId,
        localDate: prompt.localDate || localDateOf(prompt.at, timezone),
        timezone,
        promptSentAt: prompt.at,
        promptText: prompt.text,
        firstReplyAt: messages[0]?.at,
        answer,
        reminderSentAt: this.reminders.find(within),
        intensityAtPrompt: before?.to ?? first?.from ?? initialIntensity,
        intensityChange: change
          ? change.from === change.to
            ? `kept ${change.to}`
            : `${change.from} → ${change.to}`
          : undefined,
        feedbackBarrier: barrier,
        feedbackTweak: tweak,
      };
    });
  }
}

export function localDateOf(at: Date, timezone: string): string {
  return localDateTimeOf(at, timezone).slice(0, 10);
}

/** `2026-03-03T09:00:00` in the participant's zone (UTC when unknown). */
export function localDateTimeOf(at: Date, timezone: string): string {
  const zoned = Temporal.Instant.fromEpochMilliseconds(at.getTime()).toZonedDateTimeISO(timezone || 'UTC');
  return zoned.toPlainDateTime().toString({ smallestUnit: 'second' });
}
