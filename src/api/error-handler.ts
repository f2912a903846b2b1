/**
 * The ONE place that chooses HTTP statuses for errors. `AppError` codes map to statuses; Fastify's own client
 * errors (bad JSON, body too large, unsupported media type) keep their 4xx status with a readable message;
 * anything else is a 500 whose details are logged, never sent. An unknown path is a 404, a known path under another
 * method a 405 with `Allow`; errors raised before routing are in `framework-errors.ts`.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import { AppError, type AppErrorCode } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import { failure } from '../http/envelope.ts';
import { redactUrl } from '../observability/log-redaction.ts';
import { createRouteTable, shownPath } from './framework-errors.ts';

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
  // Every route registered from here on is known to the 404 handler, which answers 405 for a known path.
  const routes = createRouteTable();
  app.addHook('onRoute', (route) => routes.add(route));
  app.setErrorHandler((error, request, reply) => {
    const described = statusAndMessage(error);
    const { statusCode } = described;
    const contentType = request.headers['content-type'];
    const message =
      (error as Partial<FastifyError>).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' && contentType
        ? `Content-Type ${contentType.slice(0, 100)} is not supported; send application/json`
        : described.message;
    if (statusCode >= 500) {
      log.error(
        {
          method: request.method,
          url: redactUrl(request.url),
          error: error instanceof Error ? error.stack : String(error),
        },
        'request failed',
      );
    }
    return reply.code(statusCode).send(failure(message));
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = routes.methodsFor(path);
    if (allowed.length > 0) {
      return reply
        .code(405)
        .header('allow', allowed.join(', '))
        .send(failure(`method ${request.method} is not allowed on ${shownPath(path)}; use ${allowed.join(', ')}`));
    }
    return reply.code(404).send(failure(`no route ${request.method} ${shownPath(path)}`));
  });
}
