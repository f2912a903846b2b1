/**
 * Replay protection of the webhook channel's inbound route. A signature proves who wrote a request, not when: a
 * captured request would stay valid forever. So a request is accepted only within `PROMPTPIPE_WEBHOOK_TOLERANCE` of
 * the time it was signed (`X-PromptPipe-Timestamp`), and a message whose body says when it was sent (`timestamp`) only
 * within the same window. Inside the window a replay is a duplicate (same `id`, or the same hash of what was signed);
 * outside it, it is refused before anything is recorded.
 *
 * Both directions of the window count: a time far ahead of ours is as suspicious as one far behind.
 */

/** Unix seconds; twelve digits reach the year 33658, more is not a time anyone signs. */
const UNIX_SECONDS = /^\d{1,12}$/;

/** Why the signing time in the header is unusable or too far from `now`; undefined when it is within the window. */
export function signingTimeProblem(timestamp: string, now: Date, toleranceMs: number): string | undefined {
  if (!UNIX_SECONDS.test(timestamp)) {
    return `X-PromptPipe-Timestamp must be Unix time in whole seconds (got ${JSON.stringify(timestamp.slice(0, 40))})`;
  }
  const signedAt = new Date(Number(timestamp) * 1000);
  const problem = outsideWindow(signedAt, now, toleranceMs);
  return problem && `X-PromptPipe-Timestamp ${timestamp} (${signedAt.toISOString()}) ${problem}`;
}

/** Why the message's own `timestamp` is too far from `now`; undefined when it is within the window. */
export function messageTimeProblem(timestamp: Date, now: Date, toleranceMs: number): string | undefined {
  const problem = outsideWindow(timestamp, now, toleranceMs);
  return problem && `timestamp ${timestamp.toISOString()} ${problem}`;
}

function outsideWindow(time: Date, now: Date, toleranceMs: number): string | undefined {
  const offset = time.getTime() - now.getTime();
  if (Math.abs(offset) <= toleranceMs) return undefined;
  return (
    `is ${describeSpan(Math.abs(offset))} ${offset < 0 ? 'before' : 'after'} the server's time ` +
    `(${now.toISOString()}), outside PROMPTPIPE_WEBHOOK_TOLERANCE (${describeSpan(toleranceMs)}): ` +
    'a replayed or long-delayed request is refused'
  );
}

/** Rounded to the largest sensible unit: the message is read by a person fixing a gateway or a clock. */
function describeSpan(milliseconds: number): string {
  const seconds = Math.round(milliseconds / 1000);
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.round(hours / 24)} days`;
}
