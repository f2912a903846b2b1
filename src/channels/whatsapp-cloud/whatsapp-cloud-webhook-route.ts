/**
 * The WhatsApp Cloud API's webhook: `GET /channels/whatsapp-cloud/webhook` (Meta's subscription handshake) and
 * `POST /channels/whatsapp-cloud/webhook` (messages and statuses, signed with `X-Hub-Signature-256`).
 *
 * The POST answers 200 once every message is durably recorded (duplicates recognised by their `wamid`) and every
 * status recorded as a receipt, so Meta does not retry needlessly. A message from an unknown number, or one that
 * cannot be recorded as input, is logged and skipped, never fails the whole batch; a storage failure answers 500 so
 * Meta retries (the duplicates are then recognised).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import { failure } from '../../http/envelope.ts';
import type { InboundService } from '../../inbound/inbound-port.ts';
import type { DeliveryReceipts } from '../delivery-receipts.ts';
import { parseWhatsAppWebhook } from './whatsapp-cloud-payload.ts';
import { verifyWhatsAppSignature, WHATSAPP_SIGNATURE_HEADER } from './whatsapp-cloud-signature.ts';

export const WHATSAPP_CLOUD_WEBHOOK_PATH = '/channels/whatsapp-cloud/webhook';

export function createWhatsAppCloudRoutes(options: {
  inbound: Pick<InboundService, 'receive'>;
  receipts: Pick<DeliveryReceipts, 'receive'>;
  appSecret: string;
  verifyToken: string;
  log: Log;
}): FastifyPluginAsync {
  const { inbound, receipts, appSecret, verifyToken, log } = options;
  return async (app: FastifyInstance) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

    const tags = ['channels'];
    const verify = {
      operationId: 'verifyWhatsAppCloudWebhook',
      tags,
      summary: 'WhatsApp Cloud API: the subscription check (hub.challenge echoed for the verify token)',
    };
    app.get(WHATSAPP_CLOUD_WEBHOOK_PATH, { config: { public: true }, schema: verify }, async (request, reply) => {
      const query = request.query as Record<string, string | undefined>;
      if (query['hub.mode'] === 'subscribe' && query['hub.verify_token'] === verifyToken && query['hub.challenge']) {
        return reply.code(200).type('text/plain').send(query['hub.challenge']);
      }
      return reply.code(403).send(failure('wrong hub.verify_token or hub.mode (expected subscribe)'));
    });

    const receive = {
      operationId: 'receiveWhatsAppCloudWebhook',
      tags,
      summary: 'WhatsApp Cloud API: inbound messages and delivery statuses (signed)',
    };
    app.post(WHATSAPP_CLOUD_WEBHOOK_PATH, { config: { public: true }, schema: receive }, async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const header = request.headers[WHATSAPP_SIGNATURE_HEADER];
      if (!verifyWhatsAppSignature(appSecret, raw, Array.isArray(header) ? header[0] : header)) {
        return reply
          .code(401)
          .send(failure(`${header ? 'wrong' : 'missing'} X-Hub-Signature-256: expected sha256=<HMAC of the raw body>`));
      }
      let json: unknown;
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch (error) {
        throw new AppError('invalid_input', `request body is not valid JSON: ${(error as Error).message}`);
      }
      const { messages, receipts: statuses } = parseWhatsAppWebhook(json);
      for (const message of messages) {
        try {
          await inbound.receive(message);
        } catch (error) {
          if (!(error instanceof AppError) || error.code === 'unavailable') throw error;
          // The error names the sender's number: only its code is logged.
          log.warn({ channel: 'whatsapp-cloud', code: error.code }, 'WhatsApp message not accepted');
        }
      }
      for (const status of statuses) await receipts.receive(status);
      return reply.code(200).send({ status: 'ok' });
    });
  };
}
