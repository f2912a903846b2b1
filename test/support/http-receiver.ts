/**
 * A local `node:http` server that records every request (the gateway side of the webhook channel in tests) and
 * answers with a status chosen per request.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface HttpReceiver {
  readonly url: string;
  readonly requests: ReceivedRequest[];
  /** The status (and optional body) of each answer; default 200. */
  respond: (request: ReceivedRequest, index: number) => { status: number; body?: string; delayMs?: number };
  close(): Promise<void>;
}

export async function startHttpReceiver(): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const receiver: HttpReceiver = {
    url: '',
    requests,
    respond: () => ({ status: 200 }),
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
      const received: ReceivedRequest = {
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(received);
      const answer = receiver.respond(received, requests.length - 1);
      const send = (): void => {
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(answer.body ?? '{}');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  (receiver as { url: string }).url = `http://127.0.0.1:${port}/hook`;
  return receiver;
}
