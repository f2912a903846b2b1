/**
 * A local fake of the WhatsApp Cloud API's `POST /{phone-number-id}/messages` (Graph API). It accepts only the real
 * request shape (Bearer token, JSON with `messaging_product: "whatsapp"`, a digits-only `to`, and a `text`,
 * `interactive` button/list or `template` object) and answers Meta's shapes: `{messaging_product, contacts, messages:
 * [{id}]}` on success, `{error: {message, type, code, error_subcode?, error_data?, fbtrace_id}}` on failure.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

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
  readonly accepted: FakeWhatsAppMessage[];
  /** Requests refused for their shape (each with the reason): a test asserts it stays empty. */
  readonly rejected: string[];
  /** The next answers are these failures, in order. */
  failures: FakeWhatsAppFailure[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

function shapeProblem(body: Json): string | undefined {
  if (body.messaging_product !== 'whatsapp') return 'messaging_product must be "whatsapp"';
  if (typeof body.to !== 'string' || !/^\d{6,15}$/.test(body.to)) return 'to must be the number in digits';
  const type = body.type;
  if (type === 'text') {
    const text = body.text as Json | undefined;
    return typeof text?.body === 'string' && text.body !== '' ? undefined : 'text.body is required';
  }
  if (type === 'template') {
    const template = body.template as Json | undefined;
    const language = template?.language as Json | undefined;
    if (typeof template?.name !== 'string' || typeof language?.code !== 'string') {
      return 'template.name and template.language.code are required';
    }
    return undefined;
  }
  if (type === 'interactive') {
    const interactive = body.interactive as Json | undefined;
    const bodyText = (interactive?.body as Json | undefined)?.text;
    if (typeof bodyText !== 'string' || bodyText === '') return 'interactive.body.text is required';
    const action = interactive?.action as Json | undefined;
    if (interactive?.type === 'button') {
      const buttons = action?.buttons as Json[] | undefined;
      if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3) return '1 to 3 buttons';
      for (const button of buttons) {
        const reply = button.reply as Json | undefined;
        if (button.type !== 'reply' || typeof reply?.id !== 'string' || typeof reply.title !== 'string') {
          return 'each button is {type: reply, reply: {id, title}}';
        }
        if (reply.title.length > 20) return 'button titles are at most 20 characters';
      }
      return undefined;
    }
    if (interactive?.type === 'list') {
      if (typeof action?.button !== 'string') return 'action.button is required';
      const sections = action.sections as Json[] | undefined;
      const rows = Array.isArray(sections) ? sections.flatMap((section) => (section.rows as Json[]) ?? []) : [];
      if (rows.length < 1 || rows.length > 10) return '1 to 10 rows';
      for (const row of rows) {
        if (typeof row.id !== 'string' || typeof row.title !== 'string' || row.title.length > 24) {
          return 'each row has an id and a title of at most 24 characters';
        }
      }
      return undefined;
    }
    return 'interactive.type must be button or list';
  }
  return `unsupported type ${String(type)}`;
}

export async function startFakeWhatsAppCloudApi(options: {
  accessToken: string;
  phoneNumberId: string;
}): Promise<FakeWhatsAppCloudApi> {
  let counter = 0;
  const fake: FakeWhatsAppCloudApi = {
    url: '',
    accepted: [],
    rejected: [],
    failures: [],
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
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
      if (request.method !== 'POST' || request.url !== `/v21.0/${options.phoneNumberId}/messages`) {
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
      const problem = shapeProblem(body);
      if (problem) {
        fake.rejected.push(problem);
        return error(400, 100, `(#100) Invalid parameter: ${problem}`);
      }
      const failure = fake.failures.shift();
      if (failure) return error(failure.status, failure.code, failure.message);
      counter += 1;
      const id = `wamid.HBgLMTU1NTEyMzAwMDEVAgARGBI${counter}`;
      fake.accepted.push({ id, body });
      return answer(200, {
        messaging_product: 'whatsapp',
        contacts: [{ input: body.to, wa_id: body.to }],
        messages: [{ id }],
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (fake as { url: string }).url = `http://127.0.0.1:${port}/v21.0`;
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
