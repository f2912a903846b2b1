/**
 * Long polling (`TELEGRAM_MODE=polling`), for a machine without a public URL: `getUpdates` waits up to
 * {@link POLL_TIMEOUT_SECONDS} for updates, each is handled in order, and the next call's `offset` confirms them to
 * Telegram. An update is confirmed only once handled (a message durably recorded), so after a crash or a failed
 * update Telegram hands it out again, and the inbound pipeline recognises a duplicate. One process polls a bot at a
 * time: a second one gets 409 Conflict from Telegram (logged, retried).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import type { TelegramBotApi } from './telegram-bot-api.ts';

export const POLL_TIMEOUT_SECONDS = 25;
const MAX_PAUSE_MS = 30_000;

export interface LongPolling {
  /** Ends the request in flight and waits until the update being handled, if any, is done. */
  stop(): Promise<void>;
}

export function startLongPolling(options: {
  api: Pick<TelegramBotApi, 'getUpdates'>;
  handle: (update: unknown) => Promise<void>;
  log: Log;
  /** The pause after the n-th failure in a row. Default 1 s, doubling up to 30 s. */
  pauseMs?: (failures: number) => number;
}): LongPolling {
  const { api, handle, log } = options;
  const pauseMs = options.pauseMs ?? ((failures: number) => Math.min(MAX_PAUSE_MS, 1000 * 2 ** (failures - 1)));
  const stopping = new AbortController();
  let offset: number | undefined;
  let failures = 0;

  async function pause(): Promise<void> {
    failures += 1;
    await sleep(pauseMs(failures), undefined, { signal: stopping.signal }).catch(() => undefined);
  }

  async function handleBatch(updates: unknown[]): Promise<boolean> {
    for (const update of updates) {
      const updateId = (update as { update_id?: unknown }).update_id;
      try {
        await handle(update);
      } catch (error) {
        // Not confirmed: Telegram hands it out again with the next call.
        log.error({ channel: 'telegram', updateId, error: errorMessage(error) }, 'telegram: update not handled');
        return false;
      }
      if (typeof updateId === 'number') offset = updateId + 1;
    }
    return true;
  }

  const loop = (async () => {
    while (!stopping.signal.aborted) {
      let updates: unknown[];
      try {
        updates = await api.getUpdates(offset, POLL_TIMEOUT_SECONDS, stopping.signal);
      } catch (error) {
        if (stopping.signal.aborted) break;
        log.warn({ channel: 'telegram', error: errorMessage(error), failures }, 'telegram: getUpdates failed');
        await pause();
        continue;
      }
      if (await handleBatch(updates)) failures = 0;
      else await pause();
    }
  })();

  return {
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
