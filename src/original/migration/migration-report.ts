/** What `migrate-from-original` tells the operator: the plan (dry run) and what was imported (pure). */
import { DataKey } from '../../domain/data-keys.ts';
import type { MigrationOutcome } from './apply-migration.ts';
import type { MigrationPlan } from './migration-plan.ts';

export interface MigrationSummary {
  source: string;
  will_import: {
    participants: number;
    by_sub_state: Record<string, number>;
    with_profile: number;
    history_messages: number;
    daily_schedules: number;
    pending_timers: number;
    responses: number;
    receipts: number;
  };
  already_imported: { participants: number; responses_and_receipts: number };
  cannot_import: string[];
}

export function summarisePlan(plan: MigrationPlan): MigrationSummary {
  const bySubState: Record<string, number> = {};
  for (const planned of plan.participants) {
    const subState = planned.stateData[DataKey.conversationState] || 'INTAKE';
    bySubState[subState] = (bySubState[subState] ?? 0) + 1;
  }
  const count = (predicate: (planned: MigrationPlan['participants'][number]) => number) =>
    plan.participants.reduce((total, planned) => total + predicate(planned), 0);
  return {
    source: plan.source,
    will_import: {
      participants: plan.participants.length,
      by_sub_state: bySubState,
      with_profile: count((planned) => (planned.stateData[DataKey.userProfile] ? 1 : 0)),
      history_messages: count((planned) => planned.history.length),
      daily_schedules: count((planned) => (planned.schedule ? 1 : 0)),
      pending_timers: count((planned) => planned.timers.length),
      responses: plan.responses.length,
      receipts: plan.receipts.length,
    },
    already_imported: {
      participants: plan.alreadyImported.length,
      responses_and_receipts: plan.recordsAlreadyImported,
    },
    cannot_import: plan.cannotImport,
  };
}

export function formatPlan(summary: MigrationSummary): string {
  const will = summary.will_import;
  const subStates = Object.entries(will.by_sub_state)
    .map(([state, count]) => `${count} in ${state}`)
    .join(', ');
  const lines = [
    `Original PromptPipe database: ${summary.source}`,
    'Will import:',
    `  ${will.participants} participant(s)${subStates ? ` (${subStates})` : ''}, ${will.with_profile} with a profile`,
    `  ${will.history_messages} history message(s), as transcript entries marked imported (the last 50 of each ` +
      'participant also as the coach’s memory)',
    `  ${will.daily_schedules} daily schedule(s), as daily prompt jobs (a day the original already served is not ` +
      'served again)',
    `  ${will.pending_timers} pending timer(s)`,
    `  ${will.responses} response(s), ${will.receipts} receipt(s)`,
  ];
  const already = summary.already_imported;
  if (already.participants + already.responses_and_receipts > 0) {
    lines.push(
      `Already imported by an earlier run: ${already.participants} participant(s), ` +
        `${already.responses_and_receipts} response(s) and receipt(s)`,
    );
  }
  lines.push(summary.cannot_import.length === 0 ? 'Cannot import: nothing' : 'Cannot import:');
  for (const line of summary.cannot_import) lines.push(`  - ${line}`);
  return `${lines.join('\n')}\n`;
}

export function formatOutcome(outcome: MigrationOutcome): string {
  const lines = [
    `Imported ${outcome.participants} participant(s), ${outcome.messages} history message(s), ` +
      `${outcome.schedules} daily schedule(s), ${outcome.timers} timer(s), ${outcome.responses} response(s), ` +
      `${outcome.receipts} receipt(s), in one transaction.`,
    ...outcome.nextPrompts.map((next) => `  next daily prompt of ${next.participantId}: ${next.at.toISOString()}`),
    'A WhatsApp Web device linked by the original is not carried over: link it again (promptpipe whatsapp login).',
  ];
  return `${lines.join('\n')}\n`;
}
