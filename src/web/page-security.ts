/**
 * The response headers of every dashboard and web-chat response. The pages load only their own stylesheet and
 * scripts from `/dashboard/assets/` (no inline script, style or event handler), talk only to this server (the chat's
 * `fetch`, both pages' EventSource) and post forms only to it, so the policy allows nothing else:
 *
 * - `Content-Security-Policy`: an injected `<script>` or inline handler would not run even if escaping failed; no
 *   other site may frame the pages (`frame-ancestors`), and `X-Frame-Options` says the same to older browsers.
 * - `X-Content-Type-Options: nosniff`: an asset is used only as the type it is served as.
 * - `Referrer-Policy`: the chat sends none at all (`no-referrer`): its URL carries its token. The dashboard sends
 *   one only to itself (`same-origin`): under `no-referrer` browsers send `Origin: null` with its forms, which its
 *   CSRF check must refuse, and "+1 day" could not return to the page it was pressed on.
 */
import type { FastifyInstance } from 'fastify';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export type ReferrerPolicy = 'no-referrer' | 'same-origin';

export function pageSecurityHeaders(referrerPolicy: ReferrerPolicy): Readonly<Record<string, string>> {
  return {
    'content-security-policy': CONTENT_SECURITY_POLICY,
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': referrerPolicy,
  };
}

/** Adds the headers to every response of the routes registered in `app` (a plugin's scope). */
export function addPageSecurityHeaders(app: FastifyInstance, referrerPolicy: ReferrerPolicy): void {
  const headers = pageSecurityHeaders(referrerPolicy);
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.headers(headers);
    return payload;
  });
}
