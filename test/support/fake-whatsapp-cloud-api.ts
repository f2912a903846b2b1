/**
 * A local fake of the WhatsApp Cloud API's `POST /{version}/{phone-number-id}/messages` (Graph API). It accepts only
 * the real request shapes (fake-whatsapp-cloud-shapes.ts: Bearer token, the documented fields of a `text`,
 * `interactive` or `template` message, a template exactly as registered) and answers Meta's shapes: `{messaging_product,
 * contacts, messages: [{id}]}` on success, `{error: {message, type, code, error_data?, fbtrace_id}}` on failure.
 *
 * With `window`, it keeps Meta's 24-hour customer-service window as Meta does: a free-form message to someone who has
 * not written in 24 hours (`customerWrote`) is still answered 200 with a wamid, then reported failed with 131047 in a
 * status webhook, like Meta's own; templates go through. Meta sends that status seconds later: the fake keeps it until
 * the test calls `flushStatuses` (posting each through `window.statuses`), so it never overtakes the send's record.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DEFAULT_GRAPH_API_VERSION } from '../../src/channels/whatsapp-cloud/graph-api-versions.ts';
import { type FakeTemplate, messageShapeProblem } from './fake-whatsapp-cloud-shapes.ts';

export type { FakeTemplate } from './fake-whatsapp-cloud-shapes.ts';

export interface FakeWhatsAppMessage {
  id: string;
  body: Record<string, unknown>;
}

export interface FakeWhatsAppFailure {
  status: number;
  code: number;
  message: string;
}

export interface FakeWhatsAppCloudApi {
  /** The API base URL to use as `WHATSAPP_CLOUD_API_URL`. */
  readonly url: string;
  /** What reached the participant: messages accepted and not failed afterwards. */
  readonly accepted: FakeWhatsAppMessage[];
  /** Free-form messages accepted (200, a wamid) and then failed with 131047: outside the window. */
  readonly failedOutsideWindow: FakeWhatsAppMessage[];
  /** Requests refused for their shape (each with the reason): a test asserts it stays empty. */
  readonly rejected: string[];
  /** The next answers are these failures, in order. */
  failures: FakeWhatsAppFailure[];
  /** The participant (digits, as `wa_id`) wrote at this instant: their window is open for 24 hours from it. */
  customerWrote(waId: string, at: Date): void;
  /** Posts the status webhooks kept so far, in order; resolves when they are answered. */
  flushStatuses(): Promise<void>;
  close(): Promise<void>;
}

type Json = Record<string, unknown>;
const WINDOW_MS = 24 * 60 * 60 * 1000;

export async function startFakeWhatsAppCloudApi(options: {
  accessToken: string;
  phoneNumberId: string;
  /** The Graph API version in the path; default PromptPipe's default. */
  version?: string;
  /** The account's approved templates; a template not listed is refused (132001). */
  templates?: FakeTemplate[];
  /** Keep the 24-hour window: `now` is Meta's clock, `statuses` posts a status webhook body to PromptPipe. */
  window?: { now: () => Date; statuses: (body: Json) => Promise<void> };
}): Promise<FakeWhatsAppCloudApi> {
  const version = options.version ?? DEFAULT_GRAPH_API_VERSION;
  const lastWrote = new Map<string, Date>();
  const pendingStatuses: Json[] = [];
  let counter = 0;
  const fake: FakeWhatsAppCloudApi = {
    url: '',
    accepted: [],
    failedOutsideWindow: [],
    rejected: [],
    failures: [],
    customerWrote: (waId, at) => {
      lastWrote.set(waId, at);
    },
    flushStatuses: async () => {
      for (let status = pendingStatuses.shift(); status; status = pendingStatuses.shift()) {
        await options.window?.statuses(whatsappWebhookBody({ statuses: [status] }, options.phoneNumberId));
      }
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };

  function windowOpen(waId: string): boolean {
    const wrote = lastWrote.get(waId);
    return wrote !== undefined && (options.window?.now() ?? new Date()).getTime() - wrote.getTime() < WINDOW_MS;
  }

  function reportOutsideWindow(message: FakeWhatsAppMessage): void {
    const window = options.window;
    if (!window) return;
    const timestamp = String(Math.floor(window.now().getTime() / 1000));
    const status = {
      id: message.id,
      status: 'failed',
      timestamp,
      recipient_id: message.body.to,
      errors: [
        {
          code: 131047,
          title: 'Re-engagement message',
          message: 'Re-engagement message',
          error_data: {
            details:
              'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
          },
        },
      ],
    };
    pendingStatuses.push(status);
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
        answer(status, { error: { message, type: 'OAuthException', code, fbtrace_id: `trace${counter}` } });
      if (request.method !== 'POST' || request.url !== `/${version}/${options.phoneNumberId}/messages`) {
        fake.rejected.push(`${request.method} ${request.url}`);
        return error(400, 100, 'Unsupported post request.');
      }
      if (request.headers.authorization !== `Bearer ${options.accessToken}`) {
        fake.rejected.push('bad authorization');
        return error(401, 190, 'Invalid OAuth access token - Cannot parse access token');
      }
      let body: Json;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      } catch {
        fake.rejected.push('body is not JSON');
        return error(400, 100, '(#100) Invalid parameter');
      }
      const problem = messageShapeProblem(body, options.templates ?? []);
      if (problem) {
        fake.rejected.push(problem.message);
        return error(problem.status, problem.code, problem.message);
      }
      const failure = fake.failures.shift();
      if (failure) return error(failure.status, failure.code, failure.message);
      counter += 1;
      const message = { id: `wamid.HBgLMTU1NTEyMzAwMDEVAgARGBI${counter}`, body };
      answer(200, {
        messaging_product: 'whatsapp',
        contacts: [{ input: body.to, wa_id: body.to }],
        messages: [{ id: message.id }],
      });
      if (options.window && body.type !== 'template' && !windowOpen(String(body.to))) {
        fake.failedOutsideWindow.push(message);
        reportOutsideWindow(message);
        return;
      }
      fake.accepted.push(message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (fake as { url: string }).url = `http://127.0.0.1:${port}/${version}`;
  return fake;
}

/** A webhook body as Meta sends it: one entry, one change of field `messages`. */
export function whatsappWebhookBody(
  value: { messages?: Json[]; statuses?: Json[] },
  phoneNumberId = '1234567890',
): Json {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '102290129340398',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550783881', phone_number_id: phoneNumberId },
              ...(value.messages ? { contacts: [{ profile: { name: 'Ada' }, wa_id: '15551230001' }] } : {}),
              ...value,
            },
          },
        ],
      },
    ],
  };
}
