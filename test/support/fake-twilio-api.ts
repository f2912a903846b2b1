/**
 * A local fake of Twilio's Messages resource: `POST /2010-04-01/Accounts/{AccountSid}/Messages.json`. It accepts only
 * the real request shape (Basic auth with the account SID and auth token, form-encoded `To`, `From` or
 * `MessagingServiceSid`, `Body`, optional `StatusCallback`) and answers Twilio's shapes: 201 with the Message resource
 * (`sid`, `status: queued`…) or an error `{code, message, more_info, status}`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeTwilioMessage {
  sid: string;
  params: Record<string, string>;
}

export interface FakeTwilioFailure {
  status: number;
  code: number;
  message: string;
}

export interface FakeTwilioApi {
  readonly url: string;
  readonly accepted: FakeTwilioMessage[];
  readonly rejected: string[];
  failures: FakeTwilioFailure[];
  close(): Promise<void>;
}

export async function startFakeTwilioApi(options: { accountSid: string; authToken: string }): Promise<FakeTwilioApi> {
  let counter = 0;
  const fake: FakeTwilioApi = {
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
  const expectedAuth = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString('base64')}`;
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
      const problem = !params.To
        ? "A 'To' phone number is required."
        : !params.From && !params.MessagingServiceSid
          ? "A 'From' phone number or MessagingServiceSid is required."
          : !params.Body
            ? 'Message body is required.'
            : params.StatusCallback !== undefined && !URL.canParse(params.StatusCallback)
              ? 'StatusCallback is not a valid URL'
              : undefined;
      if (problem) {
        fake.rejected.push(problem);
        return error(400, 21604, problem);
      }
      const failure = fake.failures.shift();
      if (failure) return error(failure.status, failure.code, failure.message);
      counter += 1;
      const sid = `SM${String(counter).padStart(32, '0')}`;
      fake.accepted.push({ sid, params });
      return answer(201, {
        account_sid: options.accountSid,
        api_version: '2010-04-01',
        body: params.Body,
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
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (fake as { url: string }).url = `http://127.0.0.1:${port}`;
  return fake;
}
