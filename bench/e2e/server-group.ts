/**
 * One or more real server processes sharing a database, as a deployment behind a load balancer runs them: the first
 * starts alone (it migrates the database), the others together once it is up. Requests go round-robin, one instance
 * after the other, as a balancer without session affinity would send them.
 */
import { type ServerProcess, type ServerProcessOptions, startServerProcess } from './server-process.ts';

export interface ServerGroup {
  readonly instances: readonly ServerProcess[];
  /** POSTs to the next instance in turn. */
  post(path: string, body: unknown): Promise<unknown>;
  /** POSTs to the first instance (the clock: every instance follows the shared one). */
  postToFirst(path: string, body: unknown): Promise<unknown>;
  /** CPU seconds of all instances together. */
  cpuSeconds(): number;
  /** The largest resident memory of one instance now, in MiB. */
  rssMiB(): number;
  /** The largest high-water mark of one instance, in MiB. */
  peakRssMiB(): number;
  stop(): Promise<void>;
}

export async function startServerGroup(
  count: number,
  environment: Record<string, string>,
  options: ServerProcessOptions = {},
): Promise<ServerGroup> {
  const trace = process.env.PROMPTPIPE_BENCH_PG_TRACE;
  const instanceEnvironment = (index: number) => ({
    // With `--import bench/e2e/pg-statement-trace.ts` in PROMPTPIPE_BENCH_SERVER_NODE_OPTIONS: where its profile goes.
    ...(trace ? { PROMPTPIPE_BENCH_PG_TRACE: trace } : {}),
    ...environment,
    ...(count > 1 ? { PROMPTPIPE_INSTANCE_ID: `bench-instance-${index + 1}` } : {}),
  });
  const instances: ServerProcess[] = [await startServerProcess(instanceEnvironment(0), options)];
  try {
    const others = await Promise.allSettled(
      Array.from({ length: count - 1 }, (_, offset) => startServerProcess(instanceEnvironment(offset + 1), options)),
    );
    for (const started of others) if (started.status === 'fulfilled') instances.push(started.value);
    const failed = others.find((started) => started.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (error) {
    await Promise.all(instances.map((instance) => instance.stop()));
    throw error;
  }
  let next = 0;
  const first = instances[0] as ServerProcess;
  return {
    instances,
    post(path, body) {
      const instance = instances[next % instances.length] as ServerProcess;
      next += 1;
      return instance.post(path, body);
    },
    postToFirst: (path, body) => first.post(path, body),
    cpuSeconds: () => instances.reduce((sum, instance) => sum + instance.cpuSeconds(), 0),
    rssMiB: () => Math.max(...instances.map((instance) => instance.rssMiB())),
    peakRssMiB: () => Math.max(...instances.map((instance) => instance.peakRssMiB())),
    async stop() {
      await Promise.all(instances.map((instance) => instance.stop()));
    },
  };
}
