/**
 * Go-style durations as used in the configuration: "15m", "3h", "1h30m", "90s", "250ms", "0", "-1h".
 * Returns milliseconds, or undefined when the text is not a duration.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '0' || trimmed === '-0') return 0;
  const match = /^(-)?((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)$/.exec(trimmed);
  if (!match) return undefined;
  const sign = match[1] ? -1 : 1;
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  for (const part of (match[2] ?? '').matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
    total += Number(part[1]) * (units[part[2] ?? ''] ?? 0);
  }
  return sign * Math.round(total);
}
