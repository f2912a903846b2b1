/**
 * A local fake of Twilio's Messages resource: `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`. It accepts only
 * the real request shapes (Basic auth with the account SID and auth token; form-encoded `To`; `From` or
 * `MessagingServiceSid`; then either `Body` or a Content Template — `ContentSid` of a template of the account and
 * `ContentVariables`, a JSON object with exactly the template's variables, never with `Body`; optional
 * `StatusCallback`) and answers Twilio's shapes: 201 with the Message resource (`sid`, `status: queued`…) or an error
 * `{code, message, more_info, status}`. Any other parameter is refused: Twilio ignores unknown parameters, which would
 * hide a misspelt one.
 *
 * With `window`, a WhatsApp sender keeps the 24-hour window as Twilio does: a `Body` to someone who has not written
 * in 24 hours (`customerWrote`) is still queued (201), then reported failed with 63016 in a status callback; a content
 * template goes through. The callback is kept until the test calls `flushStatuses` (posting each through
 * `window.statusCallback`), so it never overtakes the send's record.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { badParameterText } from './fake-whatsapp-cloud-shapes.ts';

export interface FakeTwilioMessage {
  sid: string;
  params: Record<string, string>;
}

export interface FakeTwilioFailure {
  status: number;
  code: number;
  message: string;
}

/** A Content Template of the fake account. */
export interface FakeContentTemplate {
  sid: string;
  /** Its variables' keys: `["1"]` for a body with `{{1}}`. */
  variables: string[];
}

export interface FakeTwilioApi {
  readonly url: string;
  /** What reached the participant: messages queued and not failed afterwards. */
  readonly accepted: FakeTwilioMessage[];
  /** WhatsApp `Body` messages queued and then failed with 63016: outside the window. */
  readonly failedOutsideWindow: FakeTwilioMessage[];
  readonly rejected: string[];
  failures: FakeTwilioFailure[];
  /** The participant (E.164) wrote at this instant: their WhatsApp window is open for 24 hours from it. */
  customerWrote(phone: string, at: Date): void;
  /** Posts the status callbacks kept so far, in order; resolves when they are answered. */
  flushStatuses(): Promise<void>;
  close(): Promise<void>;
}

const KNOWN_PARAMETERS = [
  'To',
  'From',
  'MessagingServiceSid',
  'Body',
  'ContentSid',
  'ContentVariables',
  'StatusCallback',
];
const WINDOW_MS = 24 * 60 * 60 * 1000;

function contentProblem(params: Record<string, string>, templates: readonly FakeContentTemplate[]): string | undefined {
  if (params.Body !== undefined) return 'Remove Body when you send a content template (ContentSid)';
  const template = templates.find((candidate) => candidate.sid === params.ContentSid);
  if (!template) return `The ContentSid ${params.ContentSid} is invalid: no such content template`;
  let variables: unknown;
  try {
    variables = JSON.parse(params.ContentVariables ?? '{}');
  } catch {
    return 'The ContentVariables parameter is invalid: not JSON';
  }
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) {
    return 'The ContentVariables parameter is invalid: not a JSON object';
  }
  const entries = Object.entries(variables);
  const keys = entries.map(([key]) => key).sort();
  if (keys.join(',') !== [...template.variables].sort().join(',')) {
    return `The ContentVariables parameter is invalid: expected the variables ${template.variables.join(', ')}`;
  }
  for (const [key, value] of entries) {
    if (typeof value !== 'string' || value === '') return `ContentVariables ${key} must be a non-empty string`;
    if (badParameterText(value)) {
      return `ContentVariables ${key}: a WhatsApp template variable cannot have newlines, tabs or more than 4 consecutive spaces (63013)`;
    }
  }
  return undefined;
}

export async function startFakeTwilioApi(options: {
  accountSid: string;
  authToken: string;
  contentTemplates?: FakeContentTemplate[];
  window?: { now: () => Date; statusCallback: (params: Record<string, string>) => Promise<void> };
}): Promise<FakeTwilioApi> {
  let counter = 0;
  const lastWrote = new Map<string, Date>();
  const pendingStatuses: Record<string, string>[] = [];
  const fake: FakeTwilioApi = {
    url: '',
    accepted: [],
    failedOutsideWindow: [],
    rejected: [],
    failures: [],
    customerWrote: (phone, at) => {
      lastWrote.set(phone, at);
    },
    flushStatuses: async () => {
      for (let status = pendingStatuses.shift(); status; status = pendingStatuses.shift()) {
        await options.window?.statusCallback(status);
      }
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
  const expectedAuth = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;

  function outsideWindow(params: Record<string, string>): boolean {
    const window = options.window;
    if (!window || !params.From?.startsWith('whatsapp:') || params.ContentSid !== undefined) return false;
    const wrote = lastWrote.get((params.To ?? '').replace(/^whatsapp:/, ''));
    return wrote === undefined || window.now().getTime() - wrote.getTime() >= WINDOW_MS;
  }

  function reportOutsideWindow(message: FakeTwilioMessage): void {
    const window = options.window;
    if (!window) return;
    pendingStatuses.push({
      MessageSid: message.sid,
      SmsSid: message.sid,
      AccountSid: options.accountSid,
      MessageStatus: 'failed',
      ErrorCode: '63016',
      ErrorMessage: 'Failed to send freeform message because you are outside the allowed window.',
      To: message.params.To ?? '',
      From: message.params.From ?? '',
    });
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const answer = (status: number, body: unknown): void => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      const error = (status: number, code: number, message: string): void =>
        answer(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
      if (request.method !== 'POST' || request.url !== `/2010-04-01/Accounts/${options.accountSid}/Messages.json`) {
        fake.rejected.push(`${request.method} ${request.url}`);
        return error(404, 20404, 'The requested resource was not found');
      }
      if (request.headers.authorization !== expectedAuth) {
        fake.rejected.push('bad authorization');
        return error(401, 20003, 'Authenticate');
      }
      if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
        fake.rejected.push('not form-encoded');
        return error(400, 21620, 'Invalid content type');
      }
      const params = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      const unknown = Object.keys(params).find((name) => !KNOWN_PARAMETERS.includes(name));
      const problem = unknown
        ? `Unknown parameter ${unknown}`
        : !params.To
          ? "A 'To' phone number is required."
          : !params.From && !params.MessagingServiceSid
            ? "A 'From' phone number or MessagingServiceSid is required."
            : params.ContentSid !== undefined
              ? contentProblem(params, options.contentTemplates ?? [])
              : params.ContentVariables !== undefined
                ? 'ContentVariables without a ContentSid'
                : !params.Body
                  ? 'Message body is required.'
                  : params.StatusCallback !== undefined && !URL.canParse(params.StatusCallback)
                    ? 'StatusCallback is not a valid URL'
                    : undefined;
      if (problem) {
        fake.rejected.push(problem);
        return error(400, params.ContentSid !== undefined ? 21656 : 21604, problem);
      }
      const failure = fake.failures.shift();
      if (failure) return error(failure.status, failure.code, failure.message);
      counter += 1;
      const sid = `SM${String(counter).padStart(32, '0')}`;
      answer(201, {
        account_sid: options.accountSid,
        api_version: '2010-04-01',
        body: params.Body ?? '',
        date_created: new Date().toUTCString(),
        direction: 'outbound-api',
        error_code: null,
        error_message: null,
        from: params.From ?? null,
        messaging_service_sid: params.MessagingServiceSid ?? null,
        num_media: '0',
        num_segments: '1',
        sid,
        status: 'queued',
        to: params.To,
        uri: `/2010-04-01/Accounts/${options.accountSid}/Messages/${sid}.json`,
      });
      const message = { sid, params };
      if (outsideWindow(params)) {
        fake.failedOutsideWindow.push(message);
        reportOutsideWindow(message);
        return;
      }
      fake.accepted.push(message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (fake as { url: string }).url = `http://127.0.0.1:${port}`;
  return fake;
}
