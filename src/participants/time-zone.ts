/**
 * IANA time-zone names, validated with the runtime's own time-zone database (ICU) so that what we accept is
 * exactly what the scheduler can later compute with.
 */

/**
 * The zone name to store, or undefined when `input` is not an IANA zone. Fixed offsets ("+01:00") are refused:
 * they ignore daylight saving time, which would shift every prompt by an hour twice a year. A differently cased
 * name ("america/new_york") is stored in its canonical case; aliases ("US/Eastern") are kept as given.
 */
export function canonicalTimeZone(input: string): string | undefined {
  const name = input.trim();
  if (!name || /^[+-]/.test(name)) return undefined;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
}
