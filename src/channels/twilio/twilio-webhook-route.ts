/**
 * Twilio's webhooks: `POST /channels/twilio/messages` (incoming messages) and `POST /channels/twilio/status` (status
 * callbacks). Both are form-encoded and signed (`X-Twilio-Signature`, checked against `TWILIO_PUBLIC_URL` + path:
 * wrong → 403, nothing recorded). Messages are answered with an empty TwiML `<Response/>` once recorded (replies go
 * out through the API), duplicates recognised by `MessageSid`.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { AppError } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import { failure } from '../../http/envelope.ts';
import type { InboundService } from '../../inbound/inbound-port.ts';
import type { DeliveryReceipts } from '../delivery-receipts.ts';
import { TWILIO_STATUS_PATH } from './twilio-channel.ts';
import { parseTwilioForm, parseTwilioMessage, parseTwilioStatus } from './twilio-payload.ts';
import { loadTwilioSignatureCheck, TWILIO_SIGNATURE_HEADER } from './twilio-signature.ts';

export const TWILIO_MESSAGES_PATH = '/channels/twilio/messages';
const EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>';

export function createTwilioRoutes(options: {
  inbound: Pick<InboundService, 'receive'>;
  receipts: Pick<DeliveryReceipts, 'receive'>;
  authToken: string;
  publicUrl: string;
  log: Log;
}): FastifyPluginAsync {
  const { inbound, receipts, authToken, log } = options;
  const publicUrl = options.publicUrl.replace(/\/+$/, '');
  return async (app: FastifyInstance) => {
    const verifyTwilioSignature = await loadTwilioSignatureCheck();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));

    function signedParams(body: unknown, header: string | string[] | undefined, path: string) {
      const params = parseTwilioForm(typeof body === 'string' ? body : '');
      const signature = Array.isArray(header) ? header[0] : header;
      return verifyTwilioSignature(authToken, `${publicUrl}${path}`, params, signature) ? params : undefined;
    }

    const tags = ['channels'];
    const messages = {
      operationId: 'receiveTwilioMessage',
      tags,
      summary: 'Twilio: an inbound message (signed form post)',
    };
    app.post(TWILIO_MESSAGES_PATH, { config: { public: true }, schema: messages }, async (request, reply) => {
      const params = signedParams(request.body, request.headers[TWILIO_SIGNATURE_HEADER], TWILIO_MESSAGES_PATH);
      if (!params) return reply.code(403).send(failure('missing or wrong X-Twilio-Signature'));
      const message = parseTwilioMessage(params);
      if (!message) throw new AppError('invalid_input', 'From is required');
      try {
        if (message.text) await inbound.receive(message);
      } catch (error) {
        if (!(error instanceof AppError) || error.code === 'unavailable') throw error;
        // The error names the sender's number: only its code is logged.
        log.warn({ channel: 'twilio', code: error.code }, 'Twilio message not accepted');
      }
      return reply.code(200).type('text/xml').send(EMPTY_TWIML);
    });

    const status = { operationId: 'receiveTwilioStatus', tags, summary: 'Twilio: a delivery status callback (signed)' };
    app.post(TWILIO_STATUS_PATH, { config: { public: true }, schema: status }, async (request, reply) => {
      const params = signedParams(request.body, request.headers[TWILIO_SIGNATURE_HEADER], TWILIO_STATUS_PATH);
      if (!params) return reply.code(403).send(failure('missing or wrong X-Twilio-Signature'));
      const receipt = parseTwilioStatus(params);
      if (receipt) await receipts.receive(receipt);
      return reply.code(200).type('text/xml').send(EMPTY_TWIML);
    });
  };
}
