/** The closed set of error codes. One place (the API error handler) maps them to HTTP statuses. */
export type AppErrorCode =
  | 'invalid_input'
  | 'not_found'
  | 'conflict'
  | 'unauthorized'
  | 'unavailable'
  | 'llm_error'
  | 'channel_error'
  | 'storage_error'
  | 'internal';

export class AppError extends Error {
  readonly code: AppErrorCode;
  readonly details: unknown;

  constructor(code: AppErrorCode, message: string, options: { cause?: unknown; details?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.details = options.details;
  }
}

/** Normalises anything thrown into an Error, at catch boundaries. */
export function toError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new Error(typeof value === 'string' ? value : JSON.stringify(value));
}

export function errorMessage(value: unknown): string {
  return toError(value).message;
}
