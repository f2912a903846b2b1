/**
 * Every JSON response of the API is an envelope: `{"status":"ok"|"error","message"?: string,"result"?: any}`.
 * (Two documented exceptions: `GET /health` answers `{status: "healthy", …}` and `/metrics` is Prometheus text.)
 */
export interface ApiEnvelope<Result = unknown> {
  status: 'ok' | 'error';
  message?: string;
  result?: Result;
}

/** A successful answer (what the route schemas declare with `envelope`, openapi.ts). */
export interface OkEnvelope<Result> {
  status: 'ok';
  message?: string;
  result: Result;
}

export function ok<Result>(result: Result, message?: string): OkEnvelope<Result> {
  return message === undefined ? { status: 'ok', result } : { status: 'ok', message, result };
}

export function failure(message: string): ApiEnvelope<never> {
  return { status: 'error', message };
}
