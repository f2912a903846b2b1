/**
 * The ONE place that chooses HTTP statuses for errors. `AppError` codes map to statuses; Fastify's own client
 * errors (bad JSON, body too large, unsupported media type) keep their 4xx status with a readable message;
 * anything else is a 500 whose details are logged, never sent.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, type AppErrorCode } from '../domain/errors.ts';
import type { Log } from '../observability/log.ts';
import { failure } from './envelope.ts';

export const STATUS_BY_CODE: Readonly<Record<AppErrorCode, number>> = {
  invalid_input: 400,
  unauthorized: 401,
  not_found: 404,
  conflict: 409,
  llm_error: 502,
  channel_error: 502,
  unavailable: 503,
  storage_error: 500,
  internal: 500,
};

/** Fastify client errors whose own message is unhelpful. */
const FASTIFY_MESSAGES: Readonly<Record<string, (error: FastifyError) => string>> = {
  FST_ERR_CTP_INVALID_JSON_BODY: (error) => `request body is not valid JSON: ${error.message}`,
  FST_ERR_CTP_EMPTY_JSON_BODY: () => 'request body is empty but Content-Type is application/json; send a JSON object',
  FST_ERR_CTP_BODY_TOO_LARGE: () => 'request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (error) => `${error.message}; send application/json`,
};

export function statusAndMessage(error: unknown): { statusCode: number; message: string } {
  if (error instanceof AppError) return { statusCode: STATUS_BY_CODE[error.code], message: error.message };
  const fastifyError = error as Partial<FastifyError>;
  const statusCode = fastifyError.statusCode;
  if (typeof statusCode === 'number' && statusCode >= 400 && statusCode < 500) {
    const describe = fastifyError.code ? FASTIFY_MESSAGES[fastifyError.code] : undefined;
    // JSON.parse errors arrive without a Fastify code, with a 400 status and the parser's message.
    const message = describe
      ? describe(error as FastifyError)
      : error instanceof SyntaxError
        ? `request body is not valid JSON: ${error.message}`
        : (fastifyError.message ?? 'bad request');
    return { statusCode, message };
  }
  return { statusCode: 500, message: 'internal error' };
}

export function registerErrorHandling(app: FastifyInstance, log: Log): void {
  app.setErrorHandler((error, request, reply) => {
    const { statusCode, message } = statusAndMessage(error);
    if (statusCode >= 500) {
      log.error(
        { method: request.method, url: request.url, error: error instanceof Error ? error.stack : String(error) },
        'request failed',
      );
    }
    return reply.code(statusCode).send(failure(message));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(failure(`no route ${request.method} ${request.url.split('?')[0]}`)),
  );
}
