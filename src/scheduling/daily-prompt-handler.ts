/**
 * The `daily_prompt` job handler (specification §Timers, the daily prompt): delivers the day's habit prompt and arms
 * the next occurrence.
 *
 * Order of a delivery:
 * 1. Re-check the precondition (the job may be stale): the participant exists and is active, and the job is still
 *    the schedule's current timer. Otherwise complete silently.
 * 2. More than `missedPromptGraceMs` late (the server was down): skip, record `prompt-skipped`, arm the next day.
 * 3. Generate the prompt outside any transaction (an LLM call); on failure use a plain fallback prompt.
 * 4. One transaction: the generator's record (the call's provenance, `lastHabitPrompt`), the prompt text, then the
 *    Done poll as its own poll message, `lastPromptSentAt`, `total_prompts + 1`, the prompt in the working history,
 *    the `afterPromptSent` hook (reminder, intensity poll, auto-feedback) and what it asked to send (the intensity
 *    poll), the next occurrence, a `prompt-sent` event.
 *
 * Step 4 moves the schedule's `timer_id` to the next job, which is what makes a re-run of this job (the process
 * stopped after the commit but before the job was marked completed) complete silently instead of prompting twice.
 */

import type { Clock } from '../domain/clock.ts';
import { DataKey } from '../domain/data-keys.ts';
import { errorMessage } from '../domain/errors.ts';
import type { NewId } from '../domain/ids.ts';
import type { Log } from '../domain/log.ts';
import { type Participant, ParticipantStatus } from '../domain/participant.ts';
import { readProfile, writeData, writeProfile } from '../domain/participant-data.ts';
import { appendToHistory } from '../engine/conversation-history.ts';
import type { HabitPromptGenerator } from '../engine/habit-prompt-generator.ts';
import type { Messenger } from '../engine/messenger.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import { donePoll } from '../i18n/fixed-polls.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { Job, Store } from '../store/store.ts';
import type { AfterPromptSentHook, PromptDeliveryGuard } from './daily-prompt-hooks.ts';
import {
  armSchedule,
  type DailyPromptPayload,
  parseDailyPromptPayload,
  type RandomSource,
} from './daily-prompt-jobs.ts';
import { fallbackPrompt } from './fallback-prompt.ts';
import type { JobHandler } from './job-runner.ts';
import { readSchedules, type ScheduleInfo } from './schedule-registry.ts';
import { addLocalDays } from './schedule-time.ts';

export interface DailyPromptHandlerOptions {
  store: Store;
  clock: Clock;
  messenger: Messenger;
  promptGenerator: HabitPromptGenerator;
  newId: NewId;
  config: { prepTimeMinutes: number; missedPromptGraceMs: number };
  log: Log;
  /** Draws the next day's minute of a random schedule; defaults to `Math.random`. */
  random?: RandomSource;
  afterPromptSent?: AfterPromptSentHook;
  /** E.g. the engagement guard (`IDLE_PAUSES_PROMPTS`). */
  deliveryGuard?: PromptDeliveryGuard;
  /** Called after the next occurrence is committed (`runner.notify`). */
  onJobEnqueued?: () => void;
  /** The Done poll and the fallback prompt in the participant's language; defaults to the built-in catalogues. */
  messages?: MessageCatalogue;
}

interface GeneratedPrompt {
  prompt: string;
  fallback: boolean;
  /** The generator's writes, committed with the prompt (see `deferRecord`). */
  record?: () => Promise<void>;
}

type Precondition =
  | { ok: true; participant: Participant; schedule: ScheduleInfo; payload: DailyPromptPayload }
  | { ok: false; reason: string };

export function createDailyPromptHandler(options: DailyPromptHandlerOptions): JobHandler {
  const { store, clock, messenger, promptGenerator, newId, config, log } = options;
  const messages = options.messages ?? createBuiltInMessageCatalogue();
  const arming = { store, newId, random: options.random ?? Math.random, prepTimeMinutes: config.prepTimeMinutes };

  async function checkPrecondition(job: Job): Promise<Precondition> {
    const payload = parseDailyPromptPayload(job.payload);
    if (!payload || !job.participantId) return { ok: false, reason: 'invalid payload' };
    const participant = await store.participants.get(job.participantId);
    if (!participant) return { ok: false, reason: 'participant not found' };
    if (participant.status !== ParticipantStatus.ACTIVE) {
      return { ok: false, reason: `participant is ${participant.status}` };
    }
    const schedule = (await readSchedules(store, participant.id)).find((entry) => entry.id === payload.schedule_id);
    if (!schedule) return { ok: false, reason: 'schedule no longer exists' };
    // The registry names the job that is current; any other job of this schedule was replaced or already ran.
    if (schedule.timer_id !== job.id) return { ok: false, reason: 'job is no longer the schedule timer' };
    return { ok: true, participant, schedule, payload };
  }

  /** Enqueues the occurrence of the local day after this one (or later, when that one is over too). */
  function armNext(participantId: string, schedule: ScheduleInfo, payload: DailyPromptPayload) {
    return armSchedule(arming, {
      participantId,
      schedule,
      now: clock.now(),
      fromLocalDate: addLocalDays(payload.local_date, 1),
    });
  }

  async function skip(
    participant: Participant,
    schedule: ScheduleInfo,
    payload: DailyPromptPayload,
    reason: string,
    details: Record<string, unknown>,
  ): Promise<void> {
    const armed = await store.transaction(async () => {
      const next = await armNext(participant.id, schedule, payload);
      await store.events.record({
        participantId: participant.id,
        type: 'prompt-skipped',
        data: {
          reason,
          schedule_id: schedule.id,
          local_date: payload.local_date,
          fire_at: payload.fire_at,
          next_prompt_at: next.job.runAt.toISOString(),
          ...details,
        },
        createdAt: clock.now(),
      });
      return next;
    });
    options.onJobEnqueued?.();
    log.info({ participantId: participant.id, reason, nextPromptAt: armed.job.runAt.toISOString() }, 'prompt skipped');
  }

  async function generatePrompt(participant: Participant): Promise<GeneratedPrompt> {
    const participantId = participant.id;
    let failure: { error: string; missing: string[] };
    try {
      const outcome = await promptGenerator.generate(participantId, { deliveryMode: 'scheduled', deferRecord: true });
      if (outcome.ok) {
        return { prompt: outcome.prompt, fallback: false, ...(outcome.record ? { record: outcome.record } : {}) };
      }
      failure = { error: outcome.error, missing: outcome.missing };
    } catch (error) {
      failure = { error: errorMessage(error), missing: [] };
    }
    const now = clock.now();
    const profile = await readProfile(store, participantId, now);
    await store.events.record({
      participantId,
      type: 'prompt-generation-failed',
      data: { delivery_mode: 'scheduled', error: failure.error, missing: failure.missing, used_fallback: true },
      createdAt: now,
    });
    log.warn({ participantId, error: failure.error }, 'habit prompt generation failed; sending the fallback prompt');
    return { prompt: fallbackPrompt(profile, participant.language, messages), fallback: true };
  }

  return async function handleDailyPrompt(job: Job): Promise<void> {
    const precondition = await checkPrecondition(job);
    if (!precondition.ok) {
      log.debug({ jobId: job.id, participantId: job.participantId, reason: precondition.reason }, 'stale daily prompt');
      return;
    }
    const { participant, schedule, payload } = precondition;

    const lateMs = clock.now().getTime() - Date.parse(payload.fire_at);
    if (lateMs > config.missedPromptGraceMs) {
      // Nobody gets the 9 a.m. prompt at 8 p.m.: after an outage the day is skipped, not delivered late.
      await skip(participant, schedule, payload, 'missed-grace', { late_ms: lateMs });
      return;
    }
    let donePollOnly = false;
    if (options.deliveryGuard) {
      const decision = await options.deliveryGuard({ participant, now: clock.now() });
      if (decision.deliver === false) {
        await skip(participant, schedule, payload, decision.reason, {});
        return;
      }
      donePollOnly = decision.deliver === 'done-poll-only';
    }

    const { prompt, fallback, record }: GeneratedPrompt = donePollOnly
      ? { prompt: '', fallback: false }
      : await generatePrompt(participant);
    // The generated prompt, the prompt, its poll, the day's bookkeeping and the hook's follow-ups commit together: a
    // failure leaves no half-sent prompt behind, and a crash after the commit loses no follow-up.
    await store.transaction(async () => {
      await record?.();
      if (!donePollOnly) {
        await messenger.send(
          participant.id,
          { type: 'text', text: prompt },
          { kind: 'proactive', module: 'scheduler' },
        );
      }
      const sentAt = clock.now();
      await messenger.send(
        participant.id,
        { type: 'poll', ...donePoll(messages, participant.language) },
        { kind: 'poll', module: 'scheduler' },
      );
      const now = clock.now();
      const profile = await readProfile(store, participant.id, now);
      await writeProfile(
        store,
        participant.id,
        { ...profile, total_prompts: profile.total_prompts + 1, updated_at: now.toISOString() },
        now,
      );
      await writeData(
        store,
        participant.id,
        {
          [DataKey.lastPromptSentAt]: sentAt.toISOString(),
          // The generator stores what it made; the fallback is stored here so the feedback module sees either.
          ...(fallback ? { [DataKey.lastHabitPrompt]: prompt } : {}),
        },
        now,
      );
      if (!donePollOnly) {
        await appendToHistory(store, participant.id, [
          { role: 'assistant', content: prompt, timestamp: sentAt.toISOString() },
        ]);
      }
      const followUps =
        (await options.afterPromptSent?.({
          participantId: participant.id,
          participant,
          sentAt,
          prompt,
          fallback,
        })) ?? [];
      for (const send of followUps) await messenger.send(send.participantId, send.message, send.options);
      const next = await armNext(participant.id, schedule, payload);
      await store.events.record({
        participantId: participant.id,
        type: 'prompt-sent',
        data: {
          schedule_id: schedule.id,
          local_date: payload.local_date,
          target_at: payload.target_at,
          late_ms: Math.max(0, lateMs),
          fallback,
          prompt,
          ...(donePollOnly ? { done_poll_only: true } : {}),
          next_prompt_at: next.job.runAt.toISOString(),
        },
        createdAt: now,
      });
    });
    options.onJobEnqueued?.();
  };
}
