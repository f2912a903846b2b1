/**
 * Responses Fastify would otherwise produce in its own shape, put into the envelope: errors raised before routing
 * (`frameworkErrors`: a malformed URL, a path parameter over `maxParamLength`), 405 for a path that exists under
 * another method (from the not-found handler), and errors of the HTTP parser itself (`clientErrorHandler`: an
 * unparseable request line, headers too large), which never reach Fastify's request pipeline.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { failure } from '../http/envelope.ts';

/** Fastify's default, made explicit so that the 414 message can name it. */
export const MAX_PARAM_LENGTH = 100;

/** How much of a client-supplied URL an error message repeats. */
const SHOWN_URL_LENGTH = 120;

export function shownPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  return path.length > SHOWN_URL_LENGTH ? `${path.slice(0, SHOWN_URL_LENGTH)}… (${path.length} characters)` : path;
}

/** Status and message of the errors Fastify raises before a route is found. */
export function frameworkErrorStatusAndMessage(
  error: Partial<FastifyError>,
  url: string,
): { statusCode: number; message: string } {
  switch (error.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return {
        statusCode: 414,
        message: `a path parameter in ${shownPath(url)} is longer than ${MAX_PARAM_LENGTH} characters; ids are shorter`,
      };
    case 'FST_ERR_BAD_URL':
      return { statusCode: 400, message: `the URL path ${shownPath(url)} is not valid (malformed percent-encoding)` };
    default: {
      const statusCode = typeof error.statusCode === 'number' && error.statusCode >= 400 ? error.statusCode : 500;
      return { statusCode, message: statusCode >= 500 ? 'internal error' : (error.message ?? 'bad request') };
    }
  }
}

export function handleFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const { statusCode, message } = frameworkErrorStatusAndMessage(error, request.raw.url ?? '');
  void reply.code(statusCode).send(failure(message));
}

/**
 * The routes by path pattern, to tell "no such path" (404) from "no such method on this path" (405). Filled by an
 * `onRoute` hook, so it knows every route registered after it, including the channels' plugins.
 */
export interface RouteTable {
  add(route: Pick<RouteOptions, 'method' | 'url'>): void;
  /** The methods registered for a concrete path (HEAD included where Fastify exposes it), sorted. */
  methodsFor(path: string): string[];
}

function patternToRegExp(pattern: string): RegExp {
  const source = pattern
    .split('/')
    .map((segment) =>
      segment === '*' ? '.*' : segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${source}/?$`);
}

export function createRouteTable(): RouteTable {
  const routes: { pattern: RegExp; methods: string[] }[] = [];
  return {
    add(route) {
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      routes.push({
        pattern: patternToRegExp(route.url ?? ''),
        methods: methods.map((method) => method.toUpperCase()),
      });
    },
    methodsFor(path) {
      const allowed = new Set<string>();
      for (const route of routes) if (route.pattern.test(path)) for (const method of route.methods) allowed.add(method);
      return [...allowed].sort();
    },
  };
}

/** The HTTP parser's errors (before Fastify sees a request), answered in the envelope like every other error. */
export function handleClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [statusCode, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'the request took too long to arrive']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'the request headers (or the URL) are too large']
        : error.code === 'HPE_INVALID_METHOD'
          ? [405, 'the HTTP method is not supported']
          : error.code === 'HPE_URI_TOO_LONG'
            ? [414, 'the URL is too long']
            : [400, 'the request is not valid HTTP'];
  if (socket.writable) {
    const body = JSON.stringify(failure(message));
    socket.write(
      `HTTP/1.1 ${statusCode} ${STATUS_CODES[statusCode]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}
