/**
 * Server-sent events of a participant's transcript. Each open stream polls the transcript for entries after the last
 * one it sent (an indexed range read), so every writer — engine turns, timers, organiser messages, other processes on
 * the same database — shows up without a publish hook in each of them.
 *
 * A stream lives only as long as the credential that opened it: it is opened under a `key` (the chat link's
 * participant, the dashboard session), and `end(key)` closes every stream under it at once — a revoked link, a
 * deleted participant, a signed-out session stop receiving the next message. `stillAllowed` is asked every few polls
 * as well, for what no call here announces: a link revoked by another instance, a session that expired idle. Streams
 * are ended when the server closes.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TranscriptEntry } from '../store/ports/conversation-store.ts';

const POLL_INTERVAL_MS = 400;
const HEARTBEAT_MS = 15_000;
/** `stillAllowed` is asked every this many polls (a few seconds): a database read for a chat link. */
const POLLS_PER_AUTHORISATION_CHECK = 10;

export interface LiveStreamOptions {
  /** Whose stream this is; `end(key)` closes it. */
  key: string;
  afterId: number;
  list: (afterId: number) => Promise<TranscriptEntry[]>;
  render: (entry: TranscriptEntry) => Promise<string> | string;
  /** False once the credential that opened the stream no longer holds; the stream then ends. */
  stillAllowed: () => Promise<boolean> | boolean;
}

export interface LiveTranscripts {
  /** Streams entries with id > `afterId`, each rendered by `render` (empty: skipped), as `message` events. */
  stream(reply: FastifyReply, options: LiveStreamOptions): void;
  /** Ends every open stream opened under `key`, at once. */
  end(key: string): void;
}

export function createLiveTranscripts(app: FastifyInstance): LiveTranscripts {
  const open = new Map<string, Set<() => void>>();
  app.addHook('preClose', async () => {
    for (const streams of [...open.values()]) for (const end of [...streams]) end();
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
      let polls = 0;
      const poll = async (): Promise<void> => {
        if (busy || closed) return;
        busy = true;
        try {
          polls += 1;
          if (polls % POLLS_PER_AUTHORISATION_CHECK === 0 && !(await options.stillAllowed())) {
            end();
            return;
          }
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
      const streams = open.get(options.key) ?? new Set<() => void>();
      open.set(options.key, streams);
      const end = (): void => {
        if (closed) return;
        closed = true;
        clearInterval(timer);
        clearInterval(heartbeat);
        streams.delete(end);
        if (streams.size === 0 && open.get(options.key) === streams) open.delete(options.key);
        raw.end();
      };
      streams.add(end);
      raw.on('close', end);
      void poll();
    },
    end(key) {
      for (const end of [...(open.get(key) ?? [])]) end();
    },
  };
}
