/**
 * The worker thread of the SQLite store's dashboard reads (dashboard-reader.ts): its own read-only connection to the
 * database file (WAL lets it read while the server writes), answering one request at a time. Nothing else runs here.
 *
 * `readGate` (TEST ONLY, `PROMPTPIPE_TEST_DASHBOARD_READ_GATE`): while that file exists, every read waits before it
 * starts, blocking this thread only, so a test can hold a dashboard read in progress and show that turns go on.
 */
import { existsSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../../domain/errors.ts';
import type { Store } from '../store.ts';
import type {
  DashboardReadRequest,
  DashboardReadResponse,
  DashboardReadWorkerData,
} from './dashboard-read-messages.ts';
import { createSqliteStore } from './sqlite-store.ts';

const GATE_POLL_MS = 20;

function waitForGate(path: string | undefined): void {
  if (!path) return;
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  while (existsSync(path)) Atomics.wait(sleeper, 0, 0, GATE_POLL_MS);
}

async function serve(port: NonNullable<typeof parentPort>, data: DashboardReadWorkerData): Promise<void> {
  const opening: Promise<Store> = createSqliteStore({ filename: data.filename, readOnly: true });
  // Requests are answered in order: the connection is synchronous anyway, and order keeps the gate simple.
  let queue: Promise<void> = Promise.resolve();
  port.on('message', (request: DashboardReadRequest) => {
    queue = queue.then(async () => {
      let response: DashboardReadResponse;
      try {
        const store = await opening;
        waitForGate(data.readGate);
        const repository = store[request.repository] as unknown as Record<string, (...args: unknown[]) => unknown>;
        const method = repository[request.method];
        if (typeof method !== 'function') throw new Error(`no dashboard read ${request.repository}.${request.method}`);
        response = { id: request.id, result: await method.apply(repository, request.args) };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        response = {
          id: request.id,
          error: { message: errorMessage(error), code: typeof code === 'string' ? code : undefined },
        };
      }
      port.postMessage(response);
    });
  });
}

if (parentPort) void serve(parentPort, workerData as DashboardReadWorkerData);
