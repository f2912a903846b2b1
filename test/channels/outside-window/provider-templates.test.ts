/**
 * The provider adapters' templates outside the 24-hour window, against the strict fakes: the Cloud API's quick-reply
 * template whose button payloads name the poll's options (and the tap coming back as the structured answer), and
 * Twilio's Content Templates (`ContentSid` + `ContentVariables`, no `Body`), taken at once on a 63016.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { OutboundMessage } from '../../../src/channels/channel.ts';
import { createTwilioChannel } from '../../../src/channels/twilio/twilio-channel.ts';
import { parseTwilioMessage } from '../../../src/channels/twilio/twilio-payload.ts';
import { createWhatsAppCloudChannel } from '../../../src/channels/whatsapp-cloud/whatsapp-cloud-channel.ts';
import { signWhatsAppBody } from '../../../src/channels/whatsapp-cloud/whatsapp-cloud-signature.ts';
import { createWhatsAppCloudRoutes } from '../../../src/channels/whatsapp-cloud/whatsapp-cloud-webhook-route.ts';
import { silentLog } from '../../../src/observability/log.ts';
import { startFakeTwilioApi } from '../../support/fake-twilio-api.ts';
import { startFakeWhatsAppCloudApi, whatsappWebhookBody } from '../../support/fake-whatsapp-cloud-api.ts';
import { providerWebhookHarness } from '../../support/provider-channel-tests.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const LONG_AGO = new Date(Date.now() - 48 * 60 * 60 * 1000);
const SID_TEXT = `HX${'1'.repeat(32)}`;
const SID_DONE = `HX${'2'.repeat(32)}`;
const donePoll: OutboundMessage = {
  id: 'out_poll',
  participantId: 'p_1',
  to: '+15551230001',
  kind: 'poll',
  text: 'Did you do it?',
  poll: { id: 'out_poll', question: 'Did you do it?', options: ['Done', 'Next time'] },
};

describe('WhatsApp Cloud API quick-reply template', () => {
  it('carries the poll in its buttons’ payloads, and a tap comes back as the structured answer', async () => {
    const api = await startFakeWhatsAppCloudApi({
      accessToken: 'token',
      phoneNumberId: '1234567890',
      templates: [{ name: 'done_check', language: 'en_US', bodyVariables: 1, quickReplies: ['Done', 'Next time'] }],
    });
    closers.push(() => api.close());
    const channel = createWhatsAppCloudChannel({
      accessToken: 'token',
      phoneNumberId: '1234567890',
      apiUrl: api.url,
      templateName: undefined,
      templateLanguage: 'en_US',
      templates: { done_poll: { '*': { name: 'done_check', language: 'en_US' } } },
      lastInboundAt: async () => LONG_AGO,
      clock: { now: () => new Date() },
      timeoutMs: 5000,
      log: silentLog,
    });
    await channel.send(donePoll);
    expect(api.rejected).toEqual([]);
    expect(api.accepted[0]?.body.template).toEqual({
      name: 'done_check',
      language: { code: 'en_US' },
      components: [
        { type: 'body', parameters: [{ type: 'text', text: 'Did you do it?' }] },
        {
          type: 'button',
          sub_type: 'quick_reply',
          index: '0',
          parameters: [{ type: 'payload', payload: 'out_poll:0' }],
        },
        {
          type: 'button',
          sub_type: 'quick_reply',
          index: '1',
          parameters: [{ type: 'payload', payload: 'out_poll:1' }],
        },
      ],
    });

    const harness = await providerWebhookHarness(({ inbound, receipts }) =>
      createWhatsAppCloudRoutes({ inbound, receipts, appSecret: 'secret', verifyToken: 'verify', log: silentLog }),
    );
    closers.push(() => harness.close());
    await harness.enroll('+15551230001');
    const tap = { from: '15551230001', id: 'wamid.TAP1', timestamp: '1772460000', type: 'button' };
    const raw = JSON.stringify(
      whatsappWebhookBody({ messages: [{ ...tap, button: { payload: 'out_poll:1', text: 'Next time' } }] }),
    );
    const response = await harness.call('POST', '/channels/whatsapp-cloud/webhook', raw, {
      'x-hub-signature-256': signWhatsAppBody('secret', raw),
    });
    expect(response.statusCode).toBe(200);
    await harness.inbound.idle();
    expect(harness.flow.messages.at(-1)?.pollAnswer).toMatchObject({ pollId: 'out_poll', option: 'Next time' });
  });
});

describe('Twilio Content Templates', () => {
  async function twilioWith(lastInboundAt: Date) {
    const api = await startFakeTwilioApi({
      accountSid: 'AC1',
      authToken: 'auth',
      contentTemplates: [
        { sid: SID_TEXT, variables: ['1'] },
        { sid: SID_DONE, variables: ['1'] },
      ],
    });
    closers.push(() => api.close());
    const channel = createTwilioChannel({
      accountSid: 'AC1',
      authToken: 'auth',
      from: 'whatsapp:+15550001111',
      messagingServiceSid: undefined,
      publicUrl: 'https://coach.example.org',
      apiUrl: api.url,
      timeoutMs: 5000,
      contentTemplates: { text: { '*': SID_TEXT }, done_poll: { en: SID_DONE } },
      lastInboundAt: async () => lastInboundAt,
    });
    return { api, channel };
  }

  it('sends ContentSid and ContentVariables, never Body, choosing the quick-reply template of a Done poll', async () => {
    const { api, channel } = await twilioWith(LONG_AGO);
    const { poll: _poll, ...text } = donePoll;
    await channel.send({ ...text, id: 'out_text', kind: 'text', text: 'Time to walk\nnow' });
    await channel.send({ ...text, kind: 'text', followUps: [donePoll], language: 'en', text: 'Time to walk' });
    expect(api.rejected).toEqual([]);
    expect(api.accepted.map((message) => message.params)).toEqual([
      expect.objectContaining({ ContentSid: SID_TEXT, ContentVariables: '{"1":"Time to walk now"}' }),
      expect.objectContaining({ ContentSid: SID_DONE, ContentVariables: '{"1":"Time to walk. Did you do it?"}' }),
    ]);
    expect(api.accepted.some((message) => 'Body' in message.params)).toBe(false);
    // The tapped button comes back as its title: the Done poll's option, matched like typed text.
    expect(parseTwilioMessage({ From: 'whatsapp:+15551230001', MessageSid: 'SM1', ButtonText: 'Done' })?.text).toBe(
      'Done',
    );
  });

  it('takes the template path at once when the send call answers 63016', async () => {
    const { api, channel } = await twilioWith(new Date());
    api.failures.push({ status: 400, code: 63016, message: 'Failed to send freeform message outside the window' });
    const { poll: _poll, ...text } = donePoll;
    const result = await channel.send({ ...text, kind: 'text', text: 'Hello' });
    expect(api.accepted.map((message) => message.params.ContentSid)).toEqual([SID_TEXT]);
    expect(result.providerMessageId).toBe(api.accepted[0]?.sid);
  });
});
