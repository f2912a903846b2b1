/**
 * What every capability shares: the study clock, one HTTP connection pool, the database, the durable job runner
 * (with quiet hours and, on PostgreSQL with the manual clock, the shared clock) and the outbox messenger.
 */
import { createOutboxMessenger } from '../channels/outbox-messenger.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import { errorMessage } from '../domain/errors.ts';
import { randomId } from '../domain/ids.ts';
import type { Log } from '../domain/log.ts';
import { createHttpClient, type HttpClient } from '../http/http-client.ts';
import { createManualClock, isManualClock, systemClock } from '../scheduling/clock.ts';
import { createJobRunner } from '../scheduling/job-runner-service.ts';
import { withQuietHours } from '../scheduling/quiet-hours.ts';
import { createSharedManualClock, type SharedManualClock } from '../scheduling/shared-manual-clock.ts';
import type { ApplicationOptions, Core } from './application.ts';
import { wireStorage } from './store.ts';

export interface Foundation {
  core: Core;
  /** One connection pool for every outbound call (the model, the channels' providers), closed at stop. */
  httpClient: HttpClient;
  /** The manual clock shared by every instance on PostgreSQL. */
  sharedClock: SharedManualClock | undefined;
}

export async function wireCore(options: ApplicationOptions): Promise<Foundation> {
  const { config, log } = options;
  const newId = options.newId ?? randomId;
  const clock = createStudyClock(config, log);
  // The original PromptPipe's settings read as ours, and settings set but not read: said, never silently ignored.
  for (const note of config.startupNotes) log.warn({}, note);
  const httpClient = createHttpClient(config.http.proxy ? { proxy: config.http.proxy } : {});
  const { store, metrics, coordinator, lock } = await wireStorage(config, log, options.store);
  const jobRunner = createJobRunner({
    store,
    clock,
    lock,
    log,
    owner: coordinator?.owner ?? `${config.cluster.instanceId}#${newId('runner')}`,
    leaseMs: config.cluster.jobLeaseMs,
    // A dead instance's jobs are taken over as soon as its liveness lock is gone, not when their lease runs out.
    ...(coordinator ? { releaseAbandonedJobs: (now: Date) => coordinator.releaseAbandonedJobs(now) } : {}),
    onJobRun: (job, report) => metrics.recordJobLateness(job.kind, report.lateMs / 1000),
  });
  // QUIET_HOURS: proactive jobs due inside the window wait for its end (scheduling/quiet-hours.ts); replies never do.
  const runner = config.safety.quietHours
    ? withQuietHours(jobRunner, { window: config.safety.quietHours, store, clock })
    : jobRunner;
  coordinator?.onNotification('jobs', () => runner.notify());
  const sharedClock =
    coordinator && isManualClock(clock)
      ? createSharedManualClock({
          clock,
          coordinator,
          runner,
          onError: (error) => log.error({ error: errorMessage(error) }, 'following the shared manual clock failed'),
        })
      : undefined;
  const notifyRunner = (): void => runner.notify();
  // One process per SQLite database, so its runner is the only claimer: a delivery that can go now is handed to it
  // directly (see createOutboxMessenger). Several instances on PostgreSQL claim every delivery.
  const messenger = createOutboxMessenger({
    store,
    clock,
    newId,
    onEnqueued: notifyRunner,
    ...(store.dialect === 'sqlite' && !coordinator ? { handOff: runner } : {}),
  });
  const core: Core = { config, log, clock, newId, store, metrics, coordinator, lock, runner, notifyRunner, messenger };
  return { core, httpClient, sharedClock };
}

function createStudyClock(config: Config, log: Log): Clock {
  if (config.scheduling.clock !== 'manual') return systemClock;
  const clock = createManualClock(config.scheduling.clockStart ?? new Date());
  log.warn(
    { now: clock.now().toISOString() },
    'clock: MANUAL (PROMPTPIPE_CLOCK=manual); move it with POST /admin/clock',
  );
  return clock;
}
