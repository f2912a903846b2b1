/**
 * `promptpipe serve` with `PROMPTPIPE_CHANNEL=whatsapp-cloud,twilio`, each provider a local fake, as the provider
 * end-to-end tests run it: the settings that point the server at the fakes, the signed webhooks the providers send
 * into it, what a participant reads of a message a fake took, and the processes to stop afterwards.
 */
import { rm } from 'node:fs/promises';
import { expect } from 'vitest';
import { signWhatsAppBody } from '../../src/channels/whatsapp-cloud/whatsapp-cloud-signature.ts';
import type { FakeTwilioApi } from './fake-twilio-api.ts';
import type { FakeWhatsAppCloudApi } from './fake-whatsapp-cloud-api.ts';
import type { ScriptedOpenAiServer } from './scripted-openai-server.ts';
import { type ServerProcess, stopServer, waitFor } from './server-process.ts';
import { signTwilioRequest } from './twilio-signing.ts';

/** The test's accounts at both providers. */
export interface ProviderAccounts {
  accessToken: string;
  phoneNumberId: string;
  appSecret: string;
  verifyToken: string;
  accountSid: string;
  authToken: string;
  /** TWILIO_FROM: an SMS number, or `whatsapp:+1…` for WhatsApp through Twilio. */
  twilioFrom: string;
  publicUrl: string;
}

/** The channel settings of a server on both providers' fakes. */
export function providerSettings(
  accounts: ProviderAccounts,
  fakes: { whatsapp: { url: string }; twilio: { url: string } },
): Record<string, string> {
  return {
    PROMPTPIPE_CHANNEL: 'whatsapp-cloud,twilio',
    WHATSAPP_CLOUD_ACCESS_TOKEN: accounts.accessToken,
    WHATSAPP_CLOUD_PHONE_NUMBER_ID: accounts.phoneNumberId,
    WHATSAPP_CLOUD_APP_SECRET: accounts.appSecret,
    WHATSAPP_CLOUD_VERIFY_TOKEN: accounts.verifyToken,
    WHATSAPP_CLOUD_API_URL: fakes.whatsapp.url,
    TWILIO_ACCOUNT_SID: accounts.accountSid,
    TWILIO_AUTH_TOKEN: accounts.authToken,
    TWILIO_FROM: accounts.twilioFrom,
    TWILIO_PUBLIC_URL: accounts.publicUrl,
    TWILIO_API_URL: fakes.twilio.url,
  };
}

/** The scripted model, and the manual clock from `clockStart`. */
export function scriptedStudySettings(model: ScriptedOpenAiServer, clockStart: string): Record<string, string> {
  return {
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: clockStart,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    GENAI_MODEL: 'scripted',
  };
}

/**
 * Signed webhooks into the server at `baseUrl()`, exactly as Meta and Twilio send them (a function: a fake's status
 * callbacks are wired before the server has its address).
 */
export function providerWebhooks(baseUrl: () => string, accounts: ProviderAccounts) {
  return {
    /** A WhatsApp Cloud API webhook body, signed with the app secret. */
    whatsapp(body: unknown): Promise<Response> {
      const raw = JSON.stringify(body);
      return fetch(`${baseUrl()}/channels/whatsapp-cloud/webhook`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': signWhatsAppBody(accounts.appSecret, raw),
        },
        body: raw,
      });
    },
    /** A Twilio form to `path`, signed for TWILIO_PUBLIC_URL + path. */
    twilio(path: string, params: Record<string, string>): Promise<Response> {
      return fetch(`${baseUrl()}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-twilio-signature': signTwilioRequest(accounts.authToken, `${accounts.publicUrl}${path}`, params),
        },
        body: new URLSearchParams(params).toString(),
      });
    },
  };
}

/** A call to the server's API that must succeed (status below 300); answers its `result`, JSON read loosely. */
export function resultApi(baseUrl: string) {
  // biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the test
  return async (method: string, path: string, body?: unknown): Promise<any> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const json = (await response.json()) as { result?: unknown };
    expect(response.status, JSON.stringify(json)).toBeLessThan(300);
    return json.result;
  };
}

/** Waits up to 30 seconds for `check` to answer something truthy, showing the server's output if it fails. */
export function untilTruthy(server: ServerProcess) {
  return <T>(what: string, check: () => T | Promise<T>) =>
    waitFor(what, async () => (await check()) || undefined, 30_000, [server]);
}

/** What the participant reads of a message a fake took: text, interactive body, template variable or SMS body. */
export function textOf(message: { body?: Record<string, unknown>; params?: Record<string, string> }): string {
  if (message.params) {
    const { Body, ContentVariables } = message.params;
    return Body ?? (JSON.parse(ContentVariables ?? '{}') as Record<string, string>)['1'] ?? '';
  }
  const body = message.body ?? {};
  const template = body.template as { components?: { parameters?: { text?: string }[] }[] } | undefined;
  return (
    (body.text as { body?: string } | undefined)?.body ??
    (body.interactive as { body?: { text?: string } } | undefined)?.body?.text ??
    template?.components?.[0]?.parameters?.[0]?.text ??
    ''
  );
}

/** Stops what a provider test started: the server (if still running), the fakes, the model, the state directory. */
export async function stopProviderProcesses(started: {
  server: ServerProcess | undefined;
  whatsapp: FakeWhatsAppCloudApi | undefined;
  twilio: FakeTwilioApi | undefined;
  model?: ScriptedOpenAiServer | undefined;
  stateDir: string;
}): Promise<void> {
  if (started.server && !started.server.exited) await stopServer(started.server, 10_000);
  await started.whatsapp?.close();
  await started.twilio?.close();
  await started.model?.close();
  if (started.stateDir) await rm(started.stateDir, { recursive: true, force: true });
}
