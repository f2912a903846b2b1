/**
 * The original PromptPipe's `Schedule`: cron-like fields (minute, hour, day, month, weekday) in an IANA time zone,
 * each optional, an omitted field meaning "any" as a `*` does in cron; and `DEFAULT_SCHEDULE`'s five-field text. Pure;
 * when a schedule runs is original/original-schedule.ts's.
 */

export interface OriginalSchedule {
  minute?: number;
  hour?: number;
  day?: number;
  month?: number;
  /** 0 = Sunday … 6 = Saturday. */
  weekday?: number;
  /** IANA zone; UTC when absent or empty. */
  timezone?: string;
}

export const SCHEDULE_FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'weekday', min: 0, max: 6, note: ' (Sunday=0)' },
] as const;

/** What is wrong with the schedule's fields, one clause per field; empty when they are valid (the zone is not checked). */
export function scheduleFieldProblems(schedule: OriginalSchedule): string[] {
  const problems: string[] = [];
  for (const field of SCHEDULE_FIELDS) {
    const value = schedule[field.name];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < field.min || value > field.max) {
      const note = 'note' in field ? field.note : '';
      problems.push(
        `schedule.${field.name} must be an integer from ${field.min} to ${field.max}${note} (got ${value})`,
      );
    }
  }
  return problems;
}

/**
 * Reads `DEFAULT_SCHEDULE`: five fields `minute hour day month weekday`, each a number or `*`. Returns the schedule
 * or the reason it is not one. (The original also took a range and silently used its first value; that is refused
 * here, since a range would not mean what it says.)
 */
export function parseCronSchedule(text: string): { schedule: OriginalSchedule } | { problem: string } {
  const parts = text.trim().split(/\s+/);
  if (parts.length !== 5) {
    return { problem: `must have five fields "minute hour day month weekday", e.g. "0 9 * * *" (got "${text}")` };
  }
  const schedule: OriginalSchedule = {};
  for (const [index, field] of SCHEDULE_FIELDS.entries()) {
    const part = parts[index] ?? '*';
    if (part === '*') continue;
    if (!/^\d+$/.test(part)) return { problem: `${field.name} must be a number or * (got "${part}" in "${text}")` };
    schedule[field.name] = Number(part);
  }
  const [problem] = scheduleFieldProblems(schedule);
  return problem === undefined ? { schedule } : { problem };
}
