/**
 * Durations written as Go's `time.Duration` prints them (`5m0s`, `1h2m3s`, `0s`): the original PromptPipe's timers
 * showed their `remaining` time this way. Whole seconds, rounded down (the original printed nanoseconds).
 */
export function formatGoDuration(milliseconds: number): string {
  const sign = milliseconds < 0 ? '-' : '';
  const totalSeconds = Math.floor(Math.abs(milliseconds) / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  if (totalSeconds === 0) return '0s';
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}
