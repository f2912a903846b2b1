/**
 * Channel-contract fixtures of the provider adapters (provider-channel-contract.test.ts): the WhatsApp Cloud API and
 * Twilio (SMS, and WhatsApp with Content Templates), each wired to the strict local fake of its provider, its inbound
 * side through the real webhook routes of an API harness, receipts through the window re-send.
 */
import { createDeliveryReceipts } from '../../src/channels/delivery-receipts.ts';
import { createOutboxMessenger } from '../../src/channels/outbox-messenger.ts';
import { withWindowResend } from '../../src/channels/outside-window/window-resend.ts';
import { createTwilioChannel } from '../../src/channels/twilio/twilio-channel.ts';
import { createTwilioRoutes } from '../../src/channels/twilio/twilio-webhook-route.ts';
import { createWhatsAppCloudChannel } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-channel.ts';
import { signWhatsAppBody } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-signature.ts';
import { createWhatsAppCloudRoutes } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-webhook-route.ts';
import type { Clock } from '../../src/domain/clock.ts';
import { silentLog } from '../../src/observability/log.ts';
import type { Store } from '../../src/store/store.ts';
import { createApiHarness } from '../support/api-harness.ts';
import { startFakeTwilioApi } from '../support/fake-twilio-api.ts';
import { startFakeWhatsAppCloudApi, whatsappWebhookBody } from '../support/fake-whatsapp-cloud-api.ts';
import { signTwilioRequest } from '../support/twilio-signing.ts';
import type { ChannelContractFixture } from './channel-contract.ts';

const noMetrics = { recordDeliveryStatus: () => {} };
const HOUR = 60 * 60 * 1000;
const INTENSITY_BUTTONS = ['Decrease', 'Keep current', 'Increase'];
export const CONTRACT_CONTENT_SID = `HX${'0123456789abcdef'.repeat(2)}`;

/** The provider's receipts as the server records them: through the window re-send. */
function providerReceipts(store: Store, clock: Clock, channel: { name: string }) {
  let counter = 0;
  return withWindowResend(createDeliveryReceipts({ store, clock, metrics: noMetrics, log: silentLog }), {
    store,
    channels: { get: (name) => (name === channel.name ? (channel as never) : undefined) },
    clock,
    newId: (prefix) => `${prefix}_resend${++counter}`,
    log: silentLog,
  });
}

export async function whatsAppCloudFixture(): Promise<ChannelContractFixture> {
  const accessToken = 'EAAG-contract';
  const phoneNumberId = '1234567890';
  const appSecret = 'meta-app-secret';
  const api = await startFakeWhatsAppCloudApi({
    accessToken,
    phoneNumberId,
    templates: [
      { name: 'study_message', language: 'en_US', bodyVariables: 1 },
      { name: 'intensity_check', language: 'en_US', bodyVariables: 1, quickReplies: INTENSITY_BUTTONS },
    ],
  });
  let windowClosed = false;
  const channel = createWhatsAppCloudChannel({
    accessToken,
    phoneNumberId,
    apiUrl: api.url,
    templateName: 'study_message',
    templateLanguage: 'en_US',
    templates: { intensity_poll: { '*': { name: 'intensity_check', language: 'en_US' } } },
    lastInboundAt: async () => new Date(Date.now() - (windowClosed ? 25 * HOUR : 0)),
    clock: { now: () => new Date() },
    timeoutMs: 5000,
    log: silentLog,
  });
  const harness = await createApiHarness({
    extraChannelRoutes: ({ inbound, store, clock }) => [
      createWhatsAppCloudRoutes({
        inbound,
        receipts: providerReceipts(store, clock, channel),
        appSecret,
        verifyToken: 'verify',
        log: silentLog,
      }),
    ],
  });
  const post = async (body: unknown, bad = false) => {
    const raw = JSON.stringify(body);
    const response = await harness.call('POST', '/channels/whatsapp-cloud/webhook', raw, {
      'x-hub-signature-256': bad ? signWhatsAppBody('not-the-secret', raw) : signWhatsAppBody(appSecret, raw),
    });
    return response.statusCode;
  };
  const digits = (phone: string) => phone.replace('+', '');
  const status = (id: string, value: string, extra: Record<string, unknown> = {}) =>
    post(
      whatsappWebhookBody({
        statuses: [{ id, status: value, timestamp: '1772460100', recipient_id: '15551230001', ...extra }],
      }),
    );
  return {
    channel,
    delivered: () =>
      api.accepted.map(({ body }) => {
        const to = `+${String(body.to)}`;
        const template = body.template as
          | { name: string; components: { type: string; parameters: { text?: string }[] }[] }
          | undefined;
        if (template) {
          const text = template.components.find((component) => component.type === 'body')?.parameters[0]?.text ?? '';
          const buttons = template.components.some((component) => component.type === 'button');
          return { to, text, template: template.name, ...(buttons ? { options: INTENSITY_BUTTONS } : {}) };
        }
        const interactive = body.interactive as
          | { body: { text: string }; action: { buttons?: { reply: { title: string } }[] } }
          | undefined;
        return {
          to,
          text: interactive ? interactive.body.text : ((body.text as { body: string }).body ?? ''),
          ...(interactive?.action.buttons
            ? { options: interactive.action.buttons.map((button) => button.reply.title) }
            : {}),
        };
      }),
    failNext: (kind) =>
      api.failures.push(
        kind === 'retryable'
          ? { status: 503, code: 131000, message: 'Something went wrong' }
          : { status: 400, code: 131026, message: 'Message Undeliverable' },
      ),
    inbound: {
      harness,
      postText: (from, text, id, options) =>
        post(
          whatsappWebhookBody({
            messages: [{ from: digits(from), id, timestamp: '1772460000', type: 'text', text: { body: text } }],
          }),
          options?.badSignature,
        ),
      postPollAnswer: (from, pollId, index, option, id) =>
        post(
          whatsappWebhookBody({
            messages: [
              {
                from: digits(from),
                id,
                timestamp: '1772460000',
                type: 'interactive',
                interactive: { type: 'button_reply', button_reply: { id: `${pollId}:${index}`, title: option } },
              },
            ],
          }),
        ),
      postReceipt: (providerMessageId, value) => status(providerMessageId, value),
    },
    window: {
      close: () => {
        windowClosed = true;
      },
      harness,
      postWindowFailure: (providerMessageId) =>
        status(providerMessageId, 'failed', {
          errors: [{ code: 131047, title: 'Re-engagement message', message: 'Re-engagement message' }],
        }),
    },
    close: async () => {
      await api.close();
      await harness.close();
    },
  };
}

/** Twilio with an SMS sender, or with a WhatsApp one (`whatsapp: true`: the window, Content Templates). */
export async function twilioFixture(options: { whatsapp: boolean }): Promise<ChannelContractFixture> {
  const accountSid = 'AC00000000000000000000000000000002';
  const authToken = 'twilio-contract-token';
  const publicUrl = 'https://coach.example.org';
  const sender = options.whatsapp ? 'whatsapp:+15550001111' : '+15550001111';
  const address = (phone: string) => (options.whatsapp ? `whatsapp:${phone}` : phone);
  const api = await startFakeTwilioApi({
    accountSid,
    authToken,
    contentTemplates: [{ sid: CONTRACT_CONTENT_SID, variables: ['1'] }],
  });
  let windowClosed = false;
  const channel = createTwilioChannel({
    accountSid,
    authToken,
    from: sender,
    messagingServiceSid: undefined,
    publicUrl,
    apiUrl: api.url,
    timeoutMs: 5000,
    ...(options.whatsapp
      ? {
          contentTemplates: { text: { '*': CONTRACT_CONTENT_SID } },
          lastInboundAt: async () => new Date(Date.now() - (windowClosed ? 25 * HOUR : 0)),
        }
      : {}),
  });
  const harness = await createApiHarness({
    extraChannelRoutes: ({ inbound, store, clock }) => [
      createTwilioRoutes({
        inbound,
        receipts: providerReceipts(store, clock, channel),
        authToken,
        publicUrl,
        log: silentLog,
      }),
    ],
  });
  const post = async (path: string, params: Record<string, string>, bad = false) => {
    const response = await harness.app.inject({
      method: 'POST',
      url: path,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': signTwilioRequest(bad ? 'wrong-token' : authToken, `${publicUrl}${path}`, params),
      },
      payload: new URLSearchParams(params).toString(),
    });
    return response.statusCode;
  };
  const incoming = (from: string, body: string, sid: string) => ({
    MessageSid: sid,
    SmsSid: sid,
    AccountSid: accountSid,
    From: address(from),
    To: sender,
    Body: body,
    NumMedia: '0',
  });
  const status = (sid: string, value: string, extra: Record<string, string> = {}) =>
    post('/channels/twilio/status', { MessageSid: sid, MessageStatus: value, AccountSid: accountSid, ...extra });
  return {
    channel,
    delivered: () =>
      api.accepted.map(({ params }) => {
        const to = (params.To ?? '').replace(/^whatsapp:/, '');
        if (params.ContentSid === undefined) return { to, text: params.Body ?? '' };
        const variables = JSON.parse(params.ContentVariables ?? '{}') as Record<string, string>;
        return { to, text: variables['1'] ?? '', template: params.ContentSid };
      }),
    failNext: (kind) =>
      api.failures.push(
        kind === 'retryable'
          ? { status: 503, code: 20500, message: 'Internal Server Error' }
          : { status: 400, code: 21211, message: "The 'To' number is not a valid phone number." },
      ),
    inbound: {
      harness,
      postText: (from, text, sid, postOptions) =>
        post('/channels/twilio/messages', incoming(from, text, sid), postOptions?.badSignature),
      // No native polls: a poll is sent first (through the outbox), then the reply is the option's number, which the
      // inbound service turns into the structured answer.
      postPollAnswer: async (from, pollId, index, option, sid) => {
        const participant = await harness.participants.findByPhone(from);
        if (participant) {
          const messenger = createOutboxMessenger({ store: harness.store, clock: harness.clock, newId: () => pollId });
          await messenger.send(
            participant.id,
            { type: 'poll', question: 'Did you do it?', options: [option, 'Next time'] },
            { kind: 'poll', module: 'scheduler' },
          );
        }
        return post('/channels/twilio/messages', incoming(from, String(index + 1), sid));
      },
      postReceipt: (sid, value) => status(sid, value),
    },
    ...(options.whatsapp
      ? {
          window: {
            close: () => {
              windowClosed = true;
            },
            harness,
            postWindowFailure: (sid: string) =>
              status(sid, 'failed', {
                ErrorCode: '63016',
                ErrorMessage: 'Failed to send freeform message because you are outside the allowed window.',
              }),
          },
        }
      : {}),
    close: async () => {
      await api.close();
      await harness.close();
    },
  };
}
