/**
 * The gateway side of the webhook channel for the end-to-end benchmarks: accepts every outbound POST at once and
 * lets the benchmark wait for a participant's next message. Counts deliveries per outbound id, so a message
 * delivered twice shows up as a duplicate.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OutboundMessageBody {
  id: string;
  participant_id: string;
  kind: 'text' | 'poll';
  text: string;
}

export interface OutboundCapture {
  /** The value for `PROMPTPIPE_WEBHOOK_URL`. */
  readonly url: string;
  /** Deliveries received (retries of the same id included). */
  readonly deliveries: number;
  /** Outbound ids received more than once. */
  readonly duplicates: number;
  /** Distinct messages of `kind` received. */
  countOf(kind: OutboundMessageBody['kind']): number;
  /** Resolves with the participant's next text message (one received before the call counts when unclaimed). */
  nextText(participantId: string): Promise<OutboundMessageBody>;
  /** Resolves once `count` distinct messages of `kind` have arrived. */
  waitForCount(kind: OutboundMessageBody['kind'], count: number): Promise<void>;
  close(): Promise<void>;
}

export async function startOutboundCapture(): Promise<OutboundCapture> {
  const seen = new Set<string>();
  const counts = { text: 0, poll: 0 };
  let deliveries = 0;
  let duplicates = 0;
  const unclaimed = new Map<string, OutboundMessageBody[]>();
  const waiting = new Map<string, ((message: OutboundMessageBody) => void)[]>();
  const countWaiters: { kind: OutboundMessageBody['kind']; count: number; resolve: () => void }[] = [];

  function receive(message: OutboundMessageBody): void {
    deliveries += 1;
    if (seen.has(message.id)) {
      duplicates += 1;
      return;
    }
    seen.add(message.id);
    counts[message.kind] += 1;
    for (let index = countWaiters.length - 1; index >= 0; index -= 1) {
      const waiter = countWaiters[index];
      if (waiter && counts[waiter.kind] >= waiter.count) {
        countWaiters.splice(index, 1);
        waiter.resolve();
      }
    }
    if (message.kind !== 'text') return;
    const resolve = waiting.get(message.participant_id)?.shift();
    if (resolve) resolve(message);
    else unclaimed.set(message.participant_id, [...(unclaimed.get(message.participant_id) ?? []), message]);
  }

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        receive(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OutboundMessageBody);
        response.writeHead(200).end();
      } catch {
        response.writeHead(400).end();
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/outbound`,
    get deliveries() {
      return deliveries;
    },
    get duplicates() {
      return duplicates;
    },
    countOf: (kind) => counts[kind],
    nextText(participantId) {
      const early = unclaimed.get(participantId)?.shift();
      if (early) return Promise.resolve(early);
      return new Promise((resolve) => {
        waiting.set(participantId, [...(waiting.get(participantId) ?? []), resolve]);
      });
    },
    waitForCount(kind, count) {
      if (counts[kind] >= count) return Promise.resolve();
      return new Promise((resolve) => countWaiters.push({ kind, count, resolve }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
