/** A local wall-clock time of day (`HH:MM`), as settings and schedules write it. Pure. */

/** A local wall-clock time of day, minute precision. */
export interface LocalTime {
  hour: number;
  minute: number;
}

const LOCAL_TIME_PATTERN = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Parses strict `HH:MM` (24-hour, two digits each); undefined otherwise. */
export function parseLocalTime(text: string): LocalTime | undefined {
  const match = LOCAL_TIME_PATTERN.exec(text.trim());
  if (!match) return undefined;
  return { hour: Number(match[1]), minute: Number(match[2]) };
}
