/**
 * Imports a migration plan in ONE transaction: every participant with their state data (profile, tone, sub-state,
 * last prompt…), their stored history as transcript entries marked imported (module `imported`) and as the working
 * history (the last 50), their daily schedule as a `daily_prompt` job whose first occurrence is after the day the
 * original already served, their pending timers as ours; then the responses and receipts. Either all of it is
 * imported or none of it.
 */

import { type ConversationMessage, MAX_STORED_HISTORY } from '../../domain/history.ts';
import type { NewId } from '../../domain/ids.ts';
import { ParticipantStatus } from '../../domain/participant.ts';
import { newFlowState } from '../../domain/participant-data.ts';
import { appendToHistory } from '../../engine/conversation-history.ts';
import { armSchedule, type RandomSource } from '../../scheduling/daily-prompt-jobs.ts';
import { addLocalDays } from '../../scheduling/schedule-time.ts';
import { enqueueTimerJob } from '../../scheduling/timers/timer-jobs.ts';
import type { NewTranscriptEntry, Store } from '../../store/store.ts';
import type { MigrationPlan } from './migration-plan.ts';
import type { PlannedParticipant } from './plan-participant.ts';

/** The transcript module of imported history: what marks an entry as imported. */
export const IMPORTED_MODULE = 'imported';

export interface MigrationOutcome {
  participants: number;
  messages: number;
  schedules: number;
  timers: number;
  responses: number;
  receipts: number;
  /** Each armed schedule's first daily prompt. */
  nextPrompts: { participantId: string; at: Date }[];
}

function transcriptEntries(planned: PlannedParticipant): NewTranscriptEntry[] {
  const fallback = planned.participant.enrolledAt;
  return planned.history.map((message: ConversationMessage) => {
    const at = new Date(message.timestamp);
    return {
      participantId: planned.participant.id,
      role: message.role,
      kind: message.role === 'user' ? 'message' : 'reply',
      content: message.content,
      module: IMPORTED_MODULE,
      createdAt: Number.isNaN(at.getTime()) ? fallback : at,
    };
  });
}

export async function applyMigration(
  store: Store,
  plan: MigrationPlan,
  options: { now: Date; newId: NewId; prepTimeMinutes: number; random?: RandomSource },
): Promise<MigrationOutcome> {
  const { now, newId } = options;
  // Written through the store, so the schedules and timers join the one transaction below.
  const arming = { store, newId, random: options.random ?? Math.random, prepTimeMinutes: options.prepTimeMinutes };
  const outcome: MigrationOutcome = {
    participants: 0,
    messages: 0,
    schedules: 0,
    timers: 0,
    responses: 0,
    receipts: 0,
    nextPrompts: [],
  };
  await store.transaction(async (tx) => {
    for (const planned of plan.participants) {
      const { participant } = planned;
      const id = participant.id;
      await tx.participants.create(participant);
      await tx.flowStates.save(newFlowState(id, now, planned.stateData));
      const entries = transcriptEntries(planned);
      if (entries.length > 0) await tx.transcript.append(entries);
      await appendToHistory(tx, id, planned.history.slice(-MAX_STORED_HISTORY));
      const active = participant.status === ParticipantStatus.ACTIVE;
      // A participant who is not active gets no proactive message; the schedule is kept and armed if they return.
      if (active && planned.schedule) {
        const armed = await armSchedule(arming, {
          participantId: id,
          schedule: planned.schedule,
          now,
          ...(planned.servedLocalDate ? { fromLocalDate: addLocalDays(planned.servedLocalDate, 1) } : {}),
        });
        outcome.schedules += 1;
        outcome.nextPrompts.push({ participantId: id, at: armed.job.runAt });
      }
      for (const timer of active ? planned.timers : []) {
        await enqueueTimerJob(arming, { ...timer, participantId: id, now });
        outcome.timers += 1;
      }
      await tx.events.record({
        participantId: id,
        type: 'participant-imported',
        data: {
          source: 'original',
          messages: entries.length,
          schedule: planned.schedule?.id ?? null,
          timers: planned.timers.map((timer) => ({ kind: timer.kind, original_job_id: timer.originalJobId })),
        },
        createdAt: now,
      });
      outcome.participants += 1;
      outcome.messages += entries.length;
    }
    for (const response of plan.responses) {
      if (await tx.originalRecords.recordResponse(response)) outcome.responses += 1;
    }
    for (const receipt of plan.receipts) {
      if (await tx.originalRecords.recordImportedReceipt(receipt)) outcome.receipts += 1;
    }
  });
  return outcome;
}
