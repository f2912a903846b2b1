/**
 * The webhook channel's inbound side: `POST /channels/webhook/messages`.
 *
 * The route has its own body parser that keeps the raw bytes, because the HMAC signature is computed over the body
 * exactly as sent; re-serialised JSON would not match. The signature is checked before the JSON is even parsed.
 * Answers `202 {"status":"ok"}` once the message is durably recorded (a repeated provider `id` too: the gateway
 * can stop retrying); processing happens after. Exempt from the API token: gateways authenticate by signature.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { failure } from '../../api/envelope.ts';
import { webhookInboundBodySchema } from '../../api/schemas.ts';
import { parseInput } from '../../api/validation.ts';
import { AppError } from '../../domain/errors.ts';
import type { InboundService } from '../inbound-service.ts';
import { WEBHOOK_CHANNEL } from './webhook-channel.ts';
import { SIGNATURE_HEADER, verifySignature } from './webhook-signature.ts';

export const WEBHOOK_INBOUND_PATH = '/channels/webhook/messages';

export function createWebhookInboundRoutes(options: {
  inbound: Pick<InboundService, 'receive'>;
  secret: string | undefined;
}): FastifyPluginAsync {
  const { inbound, secret } = options;
  return async (app: FastifyInstance) => {
    // Scoped to this plugin: the rest of the API keeps Fastify's JSON parser. Any content type is accepted, since
    // gateways are not always careful with headers; the body must still be JSON.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    app.post(WEBHOOK_INBOUND_PATH, { config: { public: true } }, async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      if (secret) {
        const header = request.headers[SIGNATURE_HEADER];
        if (!verifySignature(secret, raw, Array.isArray(header) ? header[0] : header)) {
          return reply
            .code(401)
            .send(
              failure(
                `${header ? 'wrong' : 'missing'} X-PromptPipe-Signature: expected sha256=<hex HMAC of the raw body>`,
              ),
            );
        }
      }
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch (error) {
        throw new AppError('invalid_input', `request body is not valid JSON: ${(error as Error).message}`);
      }
      const body = parseInput(webhookInboundBodySchema, json, 'webhook payload');
      await inbound.receive({
        channel: WEBHOOK_CHANNEL,
        from: body.from,
        text: body.text,
        ...(body.id ? { providerMessageId: body.id } : {}),
        ...(body.timestamp ? { timestamp: new Date(body.timestamp) } : {}),
        ...(body.poll_answer
          ? {
              pollAnswer: {
                option: body.poll_answer.option,
                ...(body.poll_answer.poll_id ? { pollId: body.poll_answer.poll_id } : {}),
              },
            }
          : {}),
      });
      return reply.code(202).send({ status: 'ok' });
    });
  };
}
