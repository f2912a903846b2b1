/**
 * Crash recovery: a message left `received` (by this process before a restart, or by an instance that died) is
 * drained by a survivor's periodic sweep (`PROMPTPIPE_RECOVERY_INTERVAL`, and on start-up) as soon as the dead
 * instance's lock is gone.
 */
import { errorMessage } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import type { Store } from '../store/store.ts';
import type { ParticipantDrains } from './participant-drains.ts';

export interface RecoverySweep {
  /** Schedules a drain for every participant with unprocessed messages; returns how many had some. */
  sweep(): Promise<number>;
  startLoop(intervalMs: number): void;
  stopLoop(): void;
}

export function createRecoverySweep(options: {
  store: Store;
  log: Log;
  drains: ParticipantDrains;
  stopping: () => boolean;
}): RecoverySweep {
  const { store, log, drains } = options;
  let timer: NodeJS.Timeout | undefined;

  async function sweep(): Promise<number> {
    if (options.stopping()) return 0;
    const participantIds = (await store.inbound.listParticipantsWithUnprocessed()).filter(
      (participantId) => !drains.isDraining(participantId),
    );
    for (const participantId of participantIds) drains.scheduleIfIdle(participantId);
    if (participantIds.length > 0) {
      log.info({ participants: participantIds.length }, 'processing inbound messages left unprocessed');
    }
    return participantIds.length;
  }

  return {
    sweep,
    startLoop(intervalMs) {
      if (timer) return;
      timer = setInterval(() => {
        sweep().catch((error: unknown) =>
          log.error({ error: errorMessage(error) }, 'looking for unprocessed inbound messages failed'),
        );
      }, intervalMs);
      timer.unref();
    },
    stopLoop() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
}
