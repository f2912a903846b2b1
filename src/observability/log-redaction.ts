/**
 * Credentials kept out of the log. Four reach the server in a request line, where Fastify's request log would copy
 * them into every line about that request: the web-chat token (the path `/chat/<token>` is the chat's only
 * credential), a staff invitation's secret (`/dashboard/invite/<secret>`), Meta's `hub.verify_token` (the query string of the WhatsApp Cloud handshake) and any token a client puts
 * in a query string (`?token=`). Headers that carry credentials (Authorization, cookies, signatures) must not be
 * logged either. The pino serializers below rewrite the fields that hold them (`req`, `url`, `headers`), and
 * `redactText` rewrites every whole line, where a message or an error's stack may quote a URL.
 */

export const REDACTED = '[redacted]';

/**
 * The web chat's path prefix (src/web/web-chat-links.ts: `CHAT_PATH_PREFIX`; a test keeps the two equal) and the
 * staff invitation links' (src/web/staff-routes.ts). Matched
 * case-insensitively and with repeated slashes: a request for `/CHAT/<token>` or `//chat/<token>` is answered 404, but
 * its URL is logged all the same.
 */
const CHAT_PATH = /^((?:[a-z][a-z0-9+.-]*:\/\/[^/?#]*)?\/+(?:chat|dashboard\/+invite)\/+)[^/?#]+/i;

/**
 * Every channel's inbound webhooks live under this prefix (a test checks each route's path). Their query strings belong
 * to the provider (Meta's `hub.*` handshake and whatever a gateway adds), so they are hidden whole rather than by name.
 */
const PROVIDER_WEBHOOK_PATH = /^(?:[a-z][a-z0-9+.-]*:\/\/[^/?#]*)?\/+channels\//i;

/*
 * The rules below, over free text, where a URL ends at whitespace or a quote. A backslash ends it too: in a JSON line a
 * quote inside a string is escaped (`\"`), and the replacement must leave that escape in place for the line to stay
 * valid JSON.
 */
const CHAT_PATH_IN_TEXT = /((?:^|[\s"'(:=]|\/\/[^/\s"'\\]+)\/+(?:chat|dashboard\/+invite)\/+)[^/?#\s"'\\<>)]+/gi;
const WEBHOOK_QUERY_IN_TEXT = /(\/+channels\/[^?\s"'\\]*\?)[^\s"'\\#]+/gi;
const PARAMETER_IN_TEXT = /([?&])([^=&#\s"'\\]+)=([^&#\s"'\\]*)/g;
const USER_INFO_IN_TEXT = /(\/\/[^/?#\s:@"'\\]+:)[^@/?#\s"'\\]+@/g;

/** Parameter and header names that carry a credential (`hub.verify_token`, `access_token`, `x-api-key`, `code`, …). */
const CREDENTIAL_NAME = /token|secret|passw|pwd|signature|sig$|key|code|auth|credential|session|cookie|jwt|otp|hmac/;

/** Whether a query parameter or header of this name holds a credential. */
export function isCredentialName(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name.replaceAll('+', ' '));
  } catch {
    // Malformed percent-encoding: judge the raw name.
  }
  return CREDENTIAL_NAME.test(decoded.toLowerCase());
}

function redactQuery(query: string): string {
  return query
    .split('&')
    .map((parameter) => {
      const equals = parameter.indexOf('=');
      if (equals === -1) return parameter;
      const name = parameter.slice(0, equals);
      return isCredentialName(name) ? `${name}=${REDACTED}` : parameter;
    })
    .join('&');
}

/**
 * A request URL (path and query, or an absolute URL) as it may be logged: the chat token replaced, a provider
 * webhook's query string replaced whole, credential-named parameters replaced, a password in the authority removed.
 */
export function redactUrl(url: string): string {
  const fragmentStart = url.indexOf('#');
  const withoutFragment = fragmentStart === -1 ? url : url.slice(0, fragmentStart);
  const queryStart = withoutFragment.indexOf('?');
  const path = queryStart === -1 ? withoutFragment : withoutFragment.slice(0, queryStart);
  const safePath = path.replace(CHAT_PATH, `$1${REDACTED}`).replace(USER_INFO_IN_TEXT, `$1${REDACTED}@`);
  if (queryStart === -1) return safePath;
  const query = withoutFragment.slice(queryStart + 1);
  if (PROVIDER_WEBHOOK_PATH.test(path)) return `${safePath}?${REDACTED}`;
  return `${safePath}?${redactQuery(query)}`;
}

/**
 * Free text (a log message, an error's stack, a whole JSON log line) with every URL in it redacted as `redactUrl`
 * does. What it inserts holds no quote or backslash, so a JSON line stays valid JSON.
 */
export function redactText(text: string): string {
  if (!text.includes('/') && !text.includes('=')) return text;
  return text
    .replace(CHAT_PATH_IN_TEXT, `$1${REDACTED}`)
    .replace(WEBHOOK_QUERY_IN_TEXT, `$1${REDACTED}`)
    .replace(PARAMETER_IN_TEXT, (whole, separator: string, name: string) =>
      isCredentialName(name) ? `${separator}${name}=${REDACTED}` : whole,
    )
    .replace(USER_INFO_IN_TEXT, `$1${REDACTED}@`);
}

/** Request headers with the values of credential headers (Authorization, cookies, `x-*-signature`, …) replaced. */
export function redactHeaders(headers: unknown): unknown {
  if (headers === null || typeof headers !== 'object') return headers;
  const safe: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) safe[name] = isCredentialName(name) ? REDACTED : value;
  return safe;
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  headers?: Record<string, unknown>;
  socket?: { remoteAddress?: string; remotePort?: number };
}

/**
 * Fastify's request fields (its default `req` serializer) with the URL redacted. Headers are left out, as Fastify
 * does: a request's credentials travel in them. Works for a Fastify request and for a raw `IncomingMessage`.
 */
function serializeRequest(request: LoggedRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: typeof request.url === 'string' ? redactUrl(request.url) : request.url,
    version: request.headers?.['accept-version'],
    host: request.host ?? request.headers?.host,
    remoteAddress: request.ip ?? request.socket?.remoteAddress,
    remotePort: request.socket?.remotePort,
  };
}

/**
 * The serializers every process logger and Fastify's request logger use, by the field they apply to: `req` (Fastify's
 * "incoming request" line), `url` (our own error lines) and `headers`.
 */
export const redactingSerializers = {
  req: serializeRequest,
  url: (url: unknown) => (typeof url === 'string' ? redactUrl(url) : url),
  headers: redactHeaders,
} as const;

/**
 * pino's last step before a line is written: the whole JSON line goes through `redactText`, so a URL quoted anywhere
 * (a message such as Fastify's "Route GET:/chat/… not found", an error's stack, a field no serializer knows) is
 * redacted too.
 */
export const redactingHooks = { streamWrite: redactText } as const;
