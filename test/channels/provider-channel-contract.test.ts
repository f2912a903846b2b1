/**
 * The channel contract (channel-contract.ts) against the provider adapters, each wired to a strict local fake of its
 * provider (provider-contract-fixtures.ts): the WhatsApp Cloud API and Twilio with a WhatsApp sender run the 24-hour
 * window cases too; Twilio SMS has no window.
 */
import { describeChannelContract } from './channel-contract.ts';
import { twilioFixture, whatsAppCloudFixture } from './provider-contract-fixtures.ts';

const twilioNotApplicable = {
  'rate limited': "Twilio's 429 names no wait: it is retried with back-off (retryable failure)",
  'recipient blocked':
    'Twilio answers STOP itself and forwards it (an inbound opt-out); a send to an unsubscribed number fails permanently (21610)',
} as const;

describeChannelContract(
  'whatsapp-cloud',
  whatsAppCloudFixture,
  {
    'rate limited':
      "Meta's rate-limit errors (130429, 131056) name no wait: they are retried with back-off (retryable failure)",
    'recipient blocked':
      'Meta does not tell a business that a user blocked it: the message just fails permanently (131026)',
  },
  { templateWindow: true },
);

describeChannelContract('twilio (SMS)', () => twilioFixture({ whatsapp: false }), twilioNotApplicable);

describeChannelContract('twilio (WhatsApp)', () => twilioFixture({ whatsapp: true }), twilioNotApplicable, {
  templateWindow: true,
});
