/**
 * The rules about time: the daily prompt at the participant's local time, once a day, with its poll, and at most
 * one reminder that never follows an answer. The daily prompts are told apart from other proactive messages by the
 * engine's `prompt-sent` events (their text and target time).
 */
import { localDateOf } from '../scheduling/schedule-time.ts';
import type { RuleResult, RuleSettings } from './rule-result.ts';
import type { ConversationLine, SimulationRecord } from './simulation-record.ts';

const TOLERANCE_MS = 60_000;

function localTimeOf(instant: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(
    instant,
  );
}

interface SentPrompt {
  index: number;
  line: ConversationLine;
  targetAt: string;
  localDate: string;
}

function sentPrompts(record: SimulationRecord): SentPrompt[] {
  const prompts: SentPrompt[] = [];
  for (const event of record.events.filter((candidate) => candidate.type === 'prompt-sent')) {
    const index = record.lines.findIndex(
      (line, position) =>
        line.from === 'coach' &&
        line.kind === 'proactive' &&
        line.text === event.data.prompt &&
        Math.abs(Date.parse(line.at) - Date.parse(event.at)) <= TOLERANCE_MS &&
        !prompts.some((prompt) => prompt.index === position),
    );
    const line = record.lines[index];
    if (line)
      prompts.push({ index, line, targetAt: String(event.data.target_at), localDate: String(event.data.local_date) });
  }
  return prompts.sort((a, b) => a.index - b.index);
}

function dailyPromptLocalTime(record: SimulationRecord, prompts: SentPrompt[], settings: RuleSettings): RuleResult {
  const rule = 'daily-prompt-local-time';
  const schedule = record.finalState.schedules[0];
  if (!schedule) return { rule, status: 'not-applicable', detail: 'no schedule was created' };
  const optedOutEarly = record.lines.some(
    (line) => line.mark === 'opt-out' && localDateOf(new Date(line.at), record.timezone) === record.start.slice(0, 10),
  );
  if (prompts.length === 0) {
    if (record.days < 2 || optedOutEarly)
      return { rule, status: 'not-applicable', detail: 'no study day after the intake' };
    return { rule, status: 'fail', detail: `no daily prompt in ${record.days} days` };
  }
  if (schedule.timezone !== record.timezone) {
    return {
      rule,
      status: 'fail',
      detail: `the schedule is in ${schedule.timezone}, the participant in ${record.timezone}`,
    };
  }
  const days = new Set<string>();
  for (const prompt of prompts) {
    if (days.has(prompt.localDate)) return { rule, status: 'fail', detail: `two daily prompts on ${prompt.localDate}` };
    days.add(prompt.localDate);
    const target = new Date(prompt.targetAt);
    const local = localTimeOf(target, record.timezone);
    const inWindow =
      schedule.type === 'fixed'
        ? local === schedule.fixed_time
        : local >= (schedule.random_start_time ?? '') && local <= (schedule.random_end_time ?? '');
    if (!inWindow)
      return {
        rule,
        status: 'fail',
        detail: `prompt of ${prompt.localDate} targets ${local} local, not the schedule's`,
      };
    const expected = target.getTime() - settings.prepTimeMinutes * 60_000;
    if (Math.abs(Date.parse(prompt.line.at) - expected) > TOLERANCE_MS) {
      return {
        rule,
        status: 'fail',
        detail: `prompt of ${prompt.localDate} arrived at ${prompt.line.at}, due ${new Date(expected).toISOString()}`,
      };
    }
  }
  return {
    rule,
    status: 'pass',
    detail: `${prompts.length} prompt(s), each at ${localTimeOf(new Date(prompts[0]?.targetAt ?? 0), record.timezone)} local less ${settings.prepTimeMinutes} min`,
  };
}

function oneReminder(record: SimulationRecord, prompts: SentPrompt[]): RuleResult {
  const rule = 'one-reminder';
  if (prompts.length === 0) return { rule, status: 'not-applicable', detail: 'no daily prompt was sent' };
  let reminders = 0;
  for (const [position, prompt] of prompts.entries()) {
    const until = prompts[position + 1]?.index ?? record.lines.length;
    const after = record.lines.slice(prompt.index + 1, until);
    const reminderLines = after.filter(
      (line) => line.from === 'coach' && line.kind === 'proactive' && line.module === 'scheduler',
    );
    reminders += reminderLines.length;
    if (reminderLines.length > 1)
      return {
        rule,
        status: 'fail',
        detail: `${reminderLines.length} reminders after the prompt of ${prompt.localDate}`,
      };
    const reminder = reminderLines[0];
    const answered = after.find((line) => line.from === 'persona');
    if (reminder && answered && answered.at < reminder.at) {
      return { rule, status: 'fail', detail: `reminder at ${reminder.at} although answered at ${answered.at}` };
    }
  }
  return { rule, status: 'pass', detail: `${reminders} reminder(s) for ${prompts.length} prompt(s)` };
}

function pollsAfterPrompt(record: SimulationRecord, prompts: SentPrompt[]): RuleResult {
  const rule = 'polls-after-prompt';
  if (prompts.length === 0) return { rule, status: 'not-applicable', detail: 'no daily prompt was sent' };
  for (const prompt of prompts) {
    const next = record.lines.slice(prompt.index + 1).find((line) => line.from === 'coach');
    if (next?.kind !== 'poll' || next.pollOptions?.length !== 2 || next.at !== prompt.line.at) {
      return { rule, status: 'fail', detail: `the prompt of ${prompt.localDate} was not followed by the Done poll` };
    }
  }
  return { rule, status: 'pass', detail: `${prompts.length} prompt(s), each with its Done poll` };
}

export function timingRules(record: SimulationRecord, settings: RuleSettings): RuleResult[] {
  const prompts = sentPrompts(record);
  return [
    dailyPromptLocalTime(record, prompts, settings),
    oneReminder(record, prompts),
    pollsAfterPrompt(record, prompts),
  ];
}
