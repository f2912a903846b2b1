/**
 * The whole application in process for tests, the one way to start it: the composition root (`createApplication`)
 * with SQLite in memory, the manual clock at {@link TEST_CLOCK_START}, no port of its own (`127.0.0.1:0`) and a silent
 * log (each can be replaced), started unless told otherwise. Requests go through `app.server.inject`. For the real server process, see
 * `server-process.ts`; for the HTTP API over fakes, `api-harness.ts`.
 */
import { pino } from 'pino';
import { loadConfig } from '../../src/config.ts';
import { type Application, type ApplicationOptions, createApplication } from '../../src/main.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

export const TEST_CLOCK_START = '2026-03-02T14:00:00Z';

export interface TestApplicationOptions extends Partial<Omit<ApplicationOptions, 'config'>> {
  /** `false`: created but not started (the test starts it, or inspects it before). Default true. */
  start?: boolean;
}

/**
 * `environment` is read as the process environment would be, over the defaults above (a test's own
 * `PROMPTPIPE_CLOCK`, `API_ADDR` or `LOG_LEVEL` wins).
 */
export async function startTestApplication(
  environment: Record<string, string> = {},
  options: TestApplicationOptions = {},
): Promise<Application> {
  const { start = true, ...applicationOptions } = options;
  const config = loadConfig({
    API_ADDR: '127.0.0.1:0',
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: TEST_CLOCK_START,
    LOG_LEVEL: 'silent',
    ...environment,
  });
  const application = await createApplication({
    ...applicationOptions,
    store: applicationOptions.store ?? (await createSqliteStore({ filename: ':memory:' })),
    config,
    log: applicationOptions.log ?? pino({ level: 'silent' }),
  });
  if (start) await application.start();
  return application;
}
