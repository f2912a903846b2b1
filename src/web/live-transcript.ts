/**
 * Server-sent events of a participant's transcript. Each open stream polls the transcript for entries after the last
 * one it sent (an indexed range read), so every writer — engine turns, timers, organiser messages, other processes on
 * the same database — shows up without a publish hook in each of them. Streams are ended when the server closes.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TranscriptEntry } from '../store/store.ts';

const POLL_INTERVAL_MS = 400;
const HEARTBEAT_MS = 15_000;

export interface LiveTranscripts {
  /** Streams entries with id > `afterId`, each rendered by `render` (empty: skipped), as `message` events. */
  stream(
    reply: FastifyReply,
    options: {
      afterId: number;
      list: (afterId: number) => Promise<TranscriptEntry[]>;
      render: (entry: TranscriptEntry) => Promise<string> | string;
    },
  ): void;
}

export function createLiveTranscripts(app: FastifyInstance): LiveTranscripts {
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of open) end();
  });

  return {
    stream(reply, options) {
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      });
      raw.write('retry: 1000\n\n');
      let lastId = options.afterId;
      let closed = false;
      let busy = false;
      const poll = async (): Promise<void> => {
        if (busy || closed) return;
        busy = true;
        try {
          for (const entry of await options.list(lastId)) {
            lastId = Math.max(lastId, entry.id);
            const fragment = await options.render(entry);
            if (fragment && !closed) {
              raw.write(`id: ${entry.id}\nevent: message\ndata: ${fragment.replace(/\n/g, '\ndata: ')}\n\n`);
            }
          }
        } catch {
          // The next poll tries again; a closed database ends the stream through preClose.
        } finally {
          busy = false;
        }
      };
      const timer = setInterval(() => void poll(), POLL_INTERVAL_MS);
      const heartbeat = setInterval(() => raw.write(': keep-alive\n\n'), HEARTBEAT_MS);
      const end = (): void => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        clearInterval(heartbeat);
        open.delete(end);
        raw.end();
      };
      open.add(end);
      raw.on('close', end);
      void poll();
    },
  };
}
