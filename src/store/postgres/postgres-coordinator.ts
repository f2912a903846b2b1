/**
 * Several PromptPipe instances on one PostgreSQL database coordinate through it, and through nothing else: one
 * dedicated connection per instance (outside the pool) carries
 *
 * - the participant lock (`ParticipantLock`): a session-level advisory lock per participant. Chosen over a lease
 *   row because (1) no transaction is held (a turn waits for the LLM for seconds; holding a transaction, or a pooled
 *   connection, across that call starves the pool), (2) it is released by PostgreSQL the moment the holder's
 *   connection closes, so when an instance is SIGKILLed the others take its participants over at once instead of
 *   after a lease, and (3) it cannot expire under a live holder, so a slow LLM call can never let a second turn of
 *   the same participant in. Keys are `(hashtext(schema), hashtext('participant:' || id))`: instances on other schemas
 *   never contend, and a hash collision only serialises two participants, never lets two turns of one run at once.
 *   Locks are taken with `pg_try_advisory_lock` and retried with back-off, so one connection serves every
 *   participant (a blocking `pg_advisory_lock` would stall the connection for all of them).
 * - the instance's liveness: the instance holds an advisory lock on its lease-owner name for its whole life
 *   (`instance-liveness.ts`), so a job running on a live instance can be told from one abandoned by a dead one: the
 *   shared manual clock waits only for the former, and the latter are released to be claimed at once.
 * - LISTEN/NOTIFY on one channel (`promptpipe`, payload `<schema>:<topic>`): a job enqueued anywhere (the store
 *   notifies inside the enqueue's transaction) and a move of the shared manual clock wake every instance at once.
 *
 * If this connection is lost, the locks it held are gone while work may still be running under them: `onLost` is
 * called and the composition root ends the process (crash-only; another instance takes the work over).
 *
 * The lock is re-entrant on request (`{ reentrant: true }`, AsyncLocalStorage): inbound processing holds a
 * participant's lock while it drains their messages, and the turn it runs takes the same lock again.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { AppError, errorMessage } from '../../domain/errors.ts';
import { createInProcessLock, type LockOptions, type ParticipantLock } from '../participant-lock.ts';
import { livenessLockName, ownerIsAliveSql, RELEASE_ABANDONED_JOBS_SQL } from './instance-liveness.ts';
import { withLockScope } from './locked-flow-state-cache.ts';
import { NOTIFY_CHANNEL } from './postgres-dialect.ts';

export type ClusterTopic = 'jobs' | 'clock';

export interface ClusterCoordinator {
  /** This process's job lease owner (instance id plus a random suffix: unique even when an instance restarts). */
  readonly owner: string;
  readonly lock: ParticipantLock;
  onNotification(topic: ClusterTopic, listener: () => void): void;
  /** Serialises `work` across every instance (e.g. `clock`: one move of the shared manual clock at a time). */
  withClusterLock<T>(name: string, work: () => Promise<T>): Promise<T>;
  /** The shared manual clock: created with `start` when absent; returns the current shared time. */
  initClock(start: Date): Promise<Date>;
  readClock(): Promise<Date | undefined>;
  /** Moves the shared clock forward (never back) and tells every instance; returns the new shared time. */
  advanceClock(instant: Date): Promise<Date>;
  /**
   * Jobs due at `now` that are not finished: pending ones, and running ones whose lease is valid and whose owner is
   * alive (a dead instance's job waits for its lease to expire; it is not "being run").
   */
  countUnfinishedDue(now: Date): Promise<{ pending: number; running: number }>;
  /**
   * The next instant after `now` at which a job becomes claimable: a pending job's run_at, or just past a running
   * job's lease (a dead instance's job is taken back then).
   */
  nextClaimableAfter(now: Date): Promise<Date | undefined>;
  /**
   * Puts the running jobs of dead instances back to pending (claimable at once, not when their lease expires) and
   * returns how many: a participant's reply, and the deliveries queued behind it, wait seconds instead of a lease.
   */
  releaseAbandonedJobs(now: Date): Promise<number>;
  close(): Promise<void>;
}

export interface ClusterCoordinatorOptions {
  connectionString: string;
  instanceId: string;
  /** The connection was lost: the advisory locks are gone. */
  onLost: (error: Error) => void;
  /** Called for notification listener errors and the like. */
  onError?: (message: string, error: unknown) => void;
}

/** The advisory-lock key of a participant: this prefix and the id. */
const PARTICIPANT_KEY = 'participant:';
const LOCK_RETRY_FIRST_MS = 5;
const LOCK_RETRY_MAX_MS = 100;

interface HeldLock {
  readonly key: string;
  active: boolean;
}

export async function createClusterCoordinator(options: ClusterCoordinatorOptions): Promise<ClusterCoordinator> {
  const owner = `${options.instanceId}#${Math.random().toString(36).slice(2, 10)}`;
  const client = new pg.Client({ connectionString: options.connectionString });
  let closing = false;
  let lost = false;
  const loseConnection = (error: Error): void => {
    if (closing || lost) return;
    lost = true;
    options.onLost(error);
  };
  client.on('error', loseConnection);
  client.on('end', () => loseConnection(new Error('the coordination connection to PostgreSQL ended')));
  await client.connect();

  const schemaRow = await client.query<{ schema: string }>('select current_schema() as schema');
  const schema = schemaRow.rows[0]?.schema;
  if (!schema) throw new AppError('internal', 'PostgreSQL has no current schema (check search_path)');

  const listeners = new Map<ClusterTopic, Array<() => void>>();
  client.on('notification', (message) => {
    if (message.channel !== NOTIFY_CHANNEL || !message.payload?.startsWith(`${schema}:`)) return;
    const topic = message.payload.slice(schema.length + 1) as ClusterTopic;
    for (const listener of listeners.get(topic) ?? []) {
      try {
        listener();
      } catch (error) {
        options.onError?.('a cluster notification listener failed', error);
      }
    }
  });
  await client.query(`listen ${NOTIFY_CHANNEL}`);
  // Held for the process's life: proves to the others that jobs leased to `owner` are being run.
  await client.query('select pg_advisory_lock(hashtext($1), hashtext($2))', [schema, livenessLockName(owner)]);

  async function tryAdvisory(key: string): Promise<boolean> {
    const result = await client.query<{ locked: boolean }>(
      'select pg_try_advisory_lock(hashtext($1), hashtext($2)) as locked',
      [schema, key],
    );
    return result.rows[0]?.locked === true;
  }

  async function acquireAdvisory(key: string): Promise<void> {
    let wait = LOCK_RETRY_FIRST_MS;
    for (;;) {
      if (lost) throw new AppError('unavailable', 'the coordination connection to PostgreSQL was lost');
      if (await tryAdvisory(key)) return;
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(LOCK_RETRY_MAX_MS, wait * 2);
    }
  }

  async function releaseAdvisory(key: string): Promise<void> {
    if (lost) return;
    await client.query('select pg_advisory_unlock(hashtext($1), hashtext($2))', [schema, key]);
  }

  const held = new AsyncLocalStorage<readonly HeldLock[]>();
  const local = createInProcessLock();

  /** Keys queued or held in this process (for `tryRun`). */
  const busy = new Map<string, number>();
  const enter = (key: string): void => {
    busy.set(key, (busy.get(key) ?? 0) + 1);
  };
  const leave = (key: string): void => {
    const count = (busy.get(key) ?? 1) - 1;
    if (count <= 0) busy.delete(key);
    else busy.set(key, count);
  };

  /**
   * Advisory locks kept, when their holder ended, for the next holder of the same key in this process, already queued
   * behind it (a reply's delivery handed to the runner while the turn still held the participant): it takes the lock
   * over without the unlock and try-lock round trips. Other instances wait until this process's queue for the key is
   * empty, as they wait for any holder.
   */
  const retained = new Set<string>();

  /** Runs `work` holding the advisory lock (already taken), marked as held for re-entrant calls. */
  async function holding<T>(
    key: string,
    current: readonly HeldLock[],
    work: () => Promise<T>,
    lockOptions: LockOptions,
  ): Promise<T> {
    const token: HeldLock = { key, active: true };
    // While the lock is held, the participant's flow state can be kept in memory (locked-flow-state-cache.ts).
    const scoped = key.startsWith(PARTICIPANT_KEY)
      ? () => withLockScope(key.slice(PARTICIPANT_KEY.length), work)
      : work;
    try {
      if (!lockOptions.reentrant) return await scoped();
      return await held.run([...current.filter((lock) => lock.active), token], scoped);
    } finally {
      // Background work started under the lock must not believe it still holds it.
      token.active = false;
      if ((busy.get(key) ?? 0) > 1 && !lost) {
        // Queued here behind this holder (counted by `enter`, not yet left): it runs next and takes the lock over.
        retained.add(key);
      } else {
        // Not awaited: the unlock is queued on the coordination connection, so this process's next lock of the key is
        // sent after it, and the work's caller does not wait a round trip for it.
        void releaseAdvisory(key).catch((error: unknown) => options.onError?.('releasing an advisory lock', error));
      }
    }
  }

  /** FIFO within this process (the in-process lock), then the advisory lock against the other instances. */
  function runLocked<T>(key: string, work: () => Promise<T>, options: LockOptions = {}): Promise<T> {
    const current = held.getStore() ?? [];
    if (current.some((lock) => lock.active && lock.key === key)) return work();
    enter(key);
    return local
      .run(key, async () => {
        if (lost) throw new AppError('unavailable', 'the coordination connection to PostgreSQL was lost');
        if (!retained.delete(key)) await acquireAdvisory(key);
        return holding(key, current, work, options);
      })
      .finally(() => leave(key));
  }

  function tryRunLocked<T>(
    key: string,
    work: () => Promise<T>,
    options: LockOptions = {},
  ): Promise<{ acquired: boolean; value?: T }> {
    const current = held.getStore() ?? [];
    if (current.some((lock) => lock.active && lock.key === key)) {
      return work().then((value) => ({ acquired: true, value }));
    }
    if (busy.has(key) || lost) return Promise.resolve({ acquired: false });
    enter(key);
    return local
      .run(key, async () => {
        if (!(await tryAdvisory(key))) return { acquired: false };
        return { acquired: true, value: await holding(key, current, work, options) };
      })
      .finally(() => leave(key));
  }

  async function readClock(): Promise<Date | undefined> {
    const result = await client.query<{ now: Date }>(`select now from study_clock where name = 'manual'`);
    return result.rows[0]?.now;
  }

  return {
    owner,
    lock: {
      run: (participantId, work, options) => runLocked(`${PARTICIPANT_KEY}${participantId}`, work, options),
      tryRun: (participantId, work, options) => tryRunLocked(`${PARTICIPANT_KEY}${participantId}`, work, options),
    },
    onNotification(topic, listener) {
      listeners.set(topic, [...(listeners.get(topic) ?? []), listener]);
    },
    withClusterLock(name, work) {
      return runLocked(`cluster:${name}`, work);
    },
    async initClock(start) {
      await client.query(
        `insert into study_clock (name, now, updated_at) values ('manual', $1, now()) on conflict (name) do nothing`,
        [start],
      );
      const current = await readClock();
      if (!current) throw new AppError('internal', 'the shared manual clock could not be created');
      return current;
    },
    readClock,
    async advanceClock(instant) {
      const result = await client.query<{ now: Date }>(
        `with moved as (
           update study_clock set now = greatest(now, $1), updated_at = now() where name = 'manual' returning now
         )
         select moved.now, pg_notify($2, $3) from moved`,
        [instant, NOTIFY_CHANNEL, `${schema}:clock`],
      );
      const now = result.rows[0]?.now;
      if (!now) throw new AppError('internal', 'the shared manual clock is missing (was it initialised?)');
      return now;
    },
    async countUnfinishedDue(now) {
      const result = await client.query<{ pending: string; running: string }>(
        // One count per status, each over its partial index (migration 014).
        `select
           (select count(*) from jobs where status = 'pending' and run_at <= $1) as pending,
           (select count(*) from jobs where status = 'running' and lease_until >= $1
                and ${ownerIsAliveSql('jobs.lease_owner', '$2')}) as running`,
        [now, schema],
      );
      return { pending: Number(result.rows[0]?.pending ?? 0), running: Number(result.rows[0]?.running ?? 0) };
    },
    async nextClaimableAfter(now) {
      const result = await client.query<{ at: Date | null }>(
        `select min(at) as at from (
           select run_at as at from jobs where status = 'pending' and run_at > $1
           union all
           select lease_until + interval '1 millisecond' from jobs where status = 'running' and lease_until >= $1
         ) as instants`,
        [now],
      );
      return result.rows[0]?.at ?? undefined;
    },
    async releaseAbandonedJobs(now) {
      const result = await client.query<{ count: number }>(RELEASE_ABANDONED_JOBS_SQL, [schema, now]);
      return result.rows[0]?.count ?? 0;
    },
    async close() {
      closing = true;
      try {
        await client.end();
      } catch (error) {
        options.onError?.('closing the coordination connection', errorMessage(error));
      }
    },
  };
}
