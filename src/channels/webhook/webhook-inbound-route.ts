/**
 * The webhook channel's inbound side: `POST /channels/webhook/messages`.
 *
 * The route has its own body parser that keeps the raw bytes, because the HMAC signature is computed over the body
 * exactly as sent; re-serialised JSON would not match. The signature is checked before the JSON is even parsed, and
 * it must cover a time (webhook-signature.ts): the `X-PromptPipe-Timestamp` header, or the body's own `timestamp`.
 * A time outside `PROMPTPIPE_WEBHOOK_TOLERANCE` is refused (webhook-replay-window.ts); inside it, a signed message
 * without an `id` is deduplicated by the hash of what was signed, so a replayed request is never a second turn.
 *
 * Answers `202 {"status":"ok"}` once the message is durably recorded (a repeated `id` too: the gateway can stop
 * retrying); processing happens after. A sender who is not enrolled gets the very same answer (only logged, not
 * processed): the route must not tell anyone who takes part in the study. Exempt from the API token: gateways
 * authenticate by signature.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../domain/clock.ts';
import { AppError } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import { failure } from '../../http/envelope.ts';
import { errorResponse } from '../../http/envelope-schemas.ts';
import { isLoopbackHost } from '../../http/loopback.ts';
import { bodyDocumentedOnly, parseInput } from '../../http/validation.ts';
import {
  derivedMessageId,
  SIGNATURE_HEADER,
  signedContent,
  TIMESTAMP_HEADER,
  verifySignature,
} from '../../http/webhook-signature.ts';
import type { InboundService } from '../../inbound/inbound-port.ts';
import { systemClock } from '../../scheduling/clock.ts';
import { WEBHOOK_CHANNEL } from './webhook-channel.ts';
import { messageTimeProblem, signingTimeProblem } from './webhook-replay-window.ts';
import { webhookInboundBodySchema } from './webhook-schemas.ts';

export const WEBHOOK_INBOUND_PATH = '/channels/webhook/messages';

export interface WebhookInboundRouteOptions {
  inbound: Pick<InboundService, 'receive'>;
  /** `PROMPTPIPE_WEBHOOK_SECRET`; without it anyone who can reach the route can post as any participant. */
  secret: string | undefined;
  /** The study clock: a message's own `timestamp` is compared with it, as its receipt time is taken from it. */
  clock: Clock;
  /** The real time gateways sign with (`X-PromptPipe-Timestamp`), even when the study clock is manual. */
  signingClock?: Clock;
  /** `PROMPTPIPE_WEBHOOK_TOLERANCE`: how far a signing time or a message time may be from ours. */
  toleranceMs: number;
  /** The listen host (`API_ADDR`): without a secret, the route warns at start-up when it is reachable from afar. */
  host: string;
  log: Log;
}

/** What a verified signature covered: the signed bytes (the dedup id of a message without one) and whether a time. */
type Authentication = { ok: true; content: Buffer; coversTime: boolean } | { ok: false; message: string };

const EXPECTED_SIGNATURE = 'expected sha256=<hex HMAC of "<X-PromptPipe-Timestamp>.<raw body>">';

export function createWebhookInboundRoutes(options: WebhookInboundRouteOptions): FastifyPluginAsync {
  const { inbound, secret, clock, toleranceMs, log } = options;
  const signingClock = options.signingClock ?? systemClock;

  function authenticate(key: string, raw: Buffer, headers: Record<string, unknown>): Authentication {
    const signature = firstHeader(headers[SIGNATURE_HEADER]);
    const timestamp = firstHeader(headers[TIMESTAMP_HEADER]);
    if (!signature) return { ok: false, message: `missing X-PromptPipe-Signature: ${EXPECTED_SIGNATURE}` };
    if (!verifySignature(key, raw, signature, timestamp)) {
      return { ok: false, message: `wrong X-PromptPipe-Signature: ${EXPECTED_SIGNATURE}` };
    }
    // Checked after the signature, so that only the holder of the secret learns how far off its clock is.
    const problem =
      timestamp === undefined ? undefined : signingTimeProblem(timestamp, signingClock.now(), toleranceMs);
    if (problem) return { ok: false, message: problem };
    return { ok: true, content: signedContent(raw, timestamp), coversTime: timestamp !== undefined };
  }

  return async (app: FastifyInstance) => {
    // Scoped to this plugin: the rest of the API keeps Fastify's JSON parser. Any content type is accepted, since
    // gateways are not always careful with headers; the body must still be JSON.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    app.addHook('onListen', async () => {
      warnIfWebhookUnsigned({ host: options.host, secret, log });
    });

    // The body is validated by the handler, after the signature over its raw bytes: only documented here.
    const schema = {
      operationId: 'receiveWebhookMessage',
      tags: ['channels'],
      summary: 'Inbound participant message for the webhook channel',
      security: [{}, { webhookSignature: [], webhookTimestamp: [] }],
      body: webhookInboundBodySchema,
      response: {
        202: {
          description:
            'Durably recorded; processed afterwards. A repeated id (or, signed without one, the same signed ' +
            'request) is acknowledged and ignored. A sender who is not enrolled gets the same answer: only ' +
            'logged, not processed (unless AUTO_ENROLL_NEW_USERS=true).',
          content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } },
        },
        400: errorResponse(
          'Invalid payload or phone number, or a timestamp outside PROMPTPIPE_WEBHOOK_TOLERANCE of the server clock',
        ),
        401: errorResponse(
          'Missing or wrong X-PromptPipe-Signature, a signature that covers no time, or an ' +
            'X-PromptPipe-Timestamp outside PROMPTPIPE_WEBHOOK_TOLERANCE (when PROMPTPIPE_WEBHOOK_SECRET is set)',
        ),
      },
    };
    const route = { config: { public: true }, schema, validatorCompiler: bodyDocumentedOnly };
    app.post(WEBHOOK_INBOUND_PATH, route, async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const signed = secret ? authenticate(secret, raw, request.headers) : undefined;
      if (signed && !signed.ok) return reply.code(401).send(failure(signed.message));
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch (error) {
        throw new AppError('invalid_input', `request body is not valid JSON: ${(error as Error).message}`);
      }
      const body = parseInput(webhookInboundBodySchema, json, 'webhook payload');
      const timestamp = body.timestamp ? new Date(body.timestamp) : undefined;
      if (signed && !signed.coversTime && !timestamp) {
        // A signature over the body alone, of a body without a time, would stay valid forever.
        return reply
          .code(401)
          .send(
            failure(
              `missing X-PromptPipe-Timestamp: the signature covers no time; ${EXPECTED_SIGNATURE} ` +
                '(or put a "timestamp" in the signed body)',
            ),
          );
      }
      const late = timestamp && messageTimeProblem(timestamp, clock.now(), toleranceMs);
      if (late) throw new AppError('invalid_input', late);
      const providerMessageId = body.id ?? (signed ? derivedMessageId(signed.content) : undefined);
      try {
        await inbound.receive({
          channel: WEBHOOK_CHANNEL,
          from: body.from,
          text: body.text,
          ...(providerMessageId ? { providerMessageId } : {}),
          ...(timestamp ? { timestamp } : {}),
          ...(body.poll_answer
            ? {
                pollAnswer: {
                  option: body.poll_answer.option,
                  ...(body.poll_answer.poll_id ? { pollId: body.poll_answer.poll_id } : {}),
                },
              }
            : {}),
        });
      } catch (error) {
        // Not enrolled (and no auto-enrolment): answered like anyone else, so the answer does not tell who is.
        if (!(error instanceof AppError && error.code === 'not_found')) throw error;
        log.info({ from: body.from, providerMessageId }, 'webhook: message from a number not enrolled; not processed');
      }
      return reply.code(202).send({ status: 'ok' });
    });
  };
}

/**
 * Without a secret the route trusts whatever it is sent: fine on loopback (a gateway on the same machine), not on a
 * public address, where anyone can write as any participant. Said loudly at start-up, like the open API.
 */
export function warnIfWebhookUnsigned(options: { host: string; secret: string | undefined; log: Log }): boolean {
  if (options.secret || isLoopbackHost(options.host)) return false;
  options.log.warn(
    { host: options.host, path: WEBHOOK_INBOUND_PATH },
    `!!! PROMPTPIPE_WEBHOOK_SECRET is not set and the server listens on a non-loopback address: anyone who can reach ` +
      `this port can POST ${WEBHOOK_INBOUND_PATH} as any participant. Set PROMPTPIPE_WEBHOOK_SECRET and sign ` +
      'requests (docs/api.md, Signatures), or API_ADDR=127.0.0.1:8080 !!!',
  );
  return true;
}

function firstHeader(value: unknown): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' && first !== '' ? first : undefined;
}
