/**
 * The template settings of the channels with a 24-hour window: the WhatsApp Cloud API's poll templates and mapping
 * file, Twilio's `TWILIO_CONTENT_SID_*` and mapping file. Bad values are start-up errors naming the setting.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const directory = mkdtempSync(join(tmpdir(), 'promptpipe-template-config-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function file(name: string, json: unknown): string {
  const path = join(directory, name);
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json));
  return path;
}

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
  TWILIO_FROM: 'whatsapp:+15550001111',
  TWILIO_PUBLIC_URL: 'https://coach.example.org/',
};
const SID_A = `HX${'a'.repeat(32)}`;
const SID_B = `HX${'b'.repeat(32)}`;
const SID_C = `HX${'c'.repeat(32)}`;

describe('WhatsApp Cloud API templates', () => {
  it('reads the poll templates and the mapping file; without them the settings keep their old shape', () => {
    expect(loadConfig(WHATSAPP).channel.whatsappCloud).not.toHaveProperty('templates');
    const mapping = file('whatsapp.json', {
      text: { es: 'mensaje_estudio', 'pt-BR': { name: 'mensagem', language: 'pt_BR' } },
      done_poll: { es: 'hecho_check' },
    });
    const settings = loadConfig({
      ...WHATSAPP,
      WHATSAPP_CLOUD_TEMPLATE_NAME: 'study_message',
      WHATSAPP_CLOUD_TEMPLATE_LANGUAGE: 'en_US',
      WHATSAPP_CLOUD_DONE_POLL_TEMPLATE_NAME: 'done_check',
      WHATSAPP_CLOUD_TEMPLATES_FILE: mapping,
    }).channel.whatsappCloud;
    expect(settings).toMatchObject({ templateName: 'study_message', templateLanguage: 'en_US' });
    expect(settings?.templates).toEqual({
      text: { es: { name: 'mensaje_estudio', language: 'es' }, 'pt-BR': { name: 'mensagem', language: 'pt_BR' } },
      done_poll: { '*': { name: 'done_check', language: 'en_US' }, es: { name: 'hecho_check', language: 'es' } },
    });
  });

  it('names every bad entry of the mapping file, and an unreadable file', () => {
    const bad = file('bad.json', { text: { english: 'x', es: 'Not A Name' }, polls: {} });
    const problems = (() => {
      try {
        loadConfig({ ...WHATSAPP, WHATSAPP_CLOUD_TEMPLATES_FILE: bad });
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(problems).toContain(`WHATSAPP_CLOUD_TEMPLATES_FILE (${bad}): "polls" is not a message kind`);
    expect(problems).toContain('text.english: not a BCP 47 language tag');
    expect(problems).toContain('text.es: must be a template name');
    expect(() => loadConfig({ ...WHATSAPP, WHATSAPP_CLOUD_TEMPLATES_FILE: file('broken.json', '{') })).toThrow(
      /WHATSAPP_CLOUD_TEMPLATES_FILE: cannot read/,
    );
    expect(() => loadConfig({ ...WHATSAPP, WHATSAPP_CLOUD_DONE_POLL_TEMPLATE_NAME: 'Done Check' })).toThrow(
      /WHATSAPP_CLOUD_DONE_POLL_TEMPLATE_NAME must be a template name/,
    );
  });
});

describe('Twilio Content Templates', () => {
  it('reads TWILIO_CONTENT_SID_<KIND>[_<LANGUAGE>] and the mapping file, the file winning', () => {
    expect(loadConfig(TWILIO).channel.twilio).not.toHaveProperty('contentTemplates');
    const mapping = file('twilio.json', { intensity_poll: { es: SID_C }, text: { es: SID_C } });
    const settings = loadConfig({
      ...TWILIO,
      TWILIO_CONTENT_SID_TEXT: SID_A,
      TWILIO_CONTENT_SID_TEXT_ES: SID_B,
      TWILIO_CONTENT_SID_DONE_POLL_PT_BR: SID_B,
      TWILIO_CONTENT_TEMPLATES_FILE: mapping,
    }).channel.twilio;
    expect(settings?.contentTemplates).toEqual({
      text: { '*': SID_A, es: SID_C },
      done_poll: { 'pt-BR': SID_B },
      intensity_poll: { es: SID_C },
    });
  });

  it('refuses a malformed SID, an unknown kind or language, and templates without a WhatsApp sender', () => {
    expect(() => loadConfig({ ...TWILIO, TWILIO_CONTENT_SID_TEXT: 'HX123' })).toThrow(
      /TWILIO_CONTENT_SID_TEXT must be a Content SID/,
    );
    expect(() => loadConfig({ ...TWILIO, TWILIO_CONTENT_SID_GREETING: SID_A })).toThrow(
      /TWILIO_CONTENT_SID_GREETING: the kind must be one of TEXT, DONE_POLL, INTENSITY_POLL/,
    );
    expect(() => loadConfig({ ...TWILIO, TWILIO_CONTENT_SID_TEXT_KLINGON: SID_A })).toThrow(
      /TWILIO_CONTENT_SID_TEXT_KLINGON: "KLINGON" is not a language tag/,
    );
    expect(() => loadConfig({ ...TWILIO, TWILIO_FROM: '+15550001111', TWILIO_CONTENT_SID_TEXT: SID_A })).toThrow(
      /need a WhatsApp sender/,
    );
  });
});
