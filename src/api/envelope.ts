/**
 * Every JSON response of the API is an envelope: `{"status":"ok"|"error","message"?: string,"result"?: any}`.
 * (Two documented exceptions: `GET /health` answers `{status: "healthy", …}` and `/metrics` is Prometheus text.)
 */
export interface ApiEnvelope<Result = unknown> {
  status: 'ok' | 'error';
  message?: string;
  result?: Result;
}

export function ok<Result>(result: Result, message?: string): ApiEnvelope<Result> {
  return message === undefined ? { status: 'ok', result } : { status: 'ok', message, result };
}

export function failure(message: string): ApiEnvelope<never> {
  return { status: 'error', message };
}
