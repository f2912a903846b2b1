import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const WHATSAPP = {
  PROMPTPIPE_CHANNEL: 'whatsapp-cloud',
  WHATSAPP_CLOUD_ACCESS_TOKEN: 'token',
  WHATSAPP_CLOUD_PHONE_NUMBER_ID: '123',
  WHATSAPP_CLOUD_APP_SECRET: 'secret',
  WHATSAPP_CLOUD_VERIFY_TOKEN: 'verify',
};
const TWILIO = {
  PROMPTPIPE_CHANNEL: 'twilio',
  TWILIO_ACCOUNT_SID: 'AC1',
  TWILIO_AUTH_TOKEN: 'auth',
  TWILIO_FROM: '+15550001111',
  TWILIO_PUBLIC_URL: 'https://coach.example.org/',
};

describe('provider channel settings', () => {
  it('reads WhatsApp Cloud settings with their defaults only when the channel is enabled', () => {
    expect(loadConfig({}).channel.whatsappCloud).toBeUndefined();
    expect(loadConfig(WHATSAPP).channel.whatsappCloud).toEqual({
      accessToken: 'token',
      phoneNumberId: '123',
      appSecret: 'secret',
      verifyToken: 'verify',
      apiUrl: 'https://graph.facebook.com/v25.0',
      templateName: undefined,
      templateLanguage: 'en_US',
    });
  });

  it('names each missing setting of an enabled channel', () => {
    expect(() => loadConfig({ ...WHATSAPP, WHATSAPP_CLOUD_APP_SECRET: '' })).toThrow(/WHATSAPP_CLOUD_APP_SECRET/);
    expect(() => loadConfig({ ...TWILIO, TWILIO_AUTH_TOKEN: undefined })).toThrow(/TWILIO_AUTH_TOKEN/);
    expect(() => loadConfig({ ...TWILIO, TWILIO_FROM: undefined })).toThrow(
      /TWILIO_FROM or TWILIO_MESSAGING_SERVICE_SID/,
    );
    expect(() => loadConfig({ ...TWILIO, TWILIO_PUBLIC_URL: undefined })).toThrow(/TWILIO_PUBLIC_URL/);
  });

  it('reads Twilio settings, both channels at once', () => {
    const config = loadConfig({ ...WHATSAPP, ...TWILIO, PROMPTPIPE_CHANNEL: 'whatsapp-cloud,twilio' });
    expect(config.channel.enabled).toEqual(['whatsapp-cloud', 'twilio']);
    expect(config.channel.twilio).toMatchObject({
      accountSid: 'AC1',
      from: '+15550001111',
      publicUrl: 'https://coach.example.org',
      apiUrl: 'https://api.twilio.com',
    });
  });
});
