/** `serve`, `chat` (the coach in this terminal) and `migrate`: the commands that run or prepare the server itself. */
import { createConsoleChannel } from '../channels/console/console-channel.ts';
import { type ConsoleChat, startConsoleChat } from '../channels/console/console-chat.ts';
import type { Config } from '../config.ts';
import { type Application, createApplication, openStore, VERSION } from '../main.ts';
import { createLogger } from '../observability/log.ts';
import { announceStateDirServer } from '../store/sqlite/state-dir-lock.ts';
import { type CliIo, logger, onShutdownSignals, ownsStateDir, readConfig } from './cli-io.ts';

export async function serve(io: CliIo): Promise<void> {
  const config = readConfig(io);
  const log = logger(config);
  const app = await createApplication({ config, log });
  onShutdownSignals(io, log, () => app.stop());
  await app.start({ listen: true });
  if (!config.storage.databaseUrl) announceStateDirServer(config.storage.stateDir, localApiUrl(app, config));
  log.info({ version: VERSION, host: config.api.host, port: config.api.port }, 'PromptPipe is running');
}

/** Where a command on this machine reaches the server: loopback when it listens on every interface. */
function localApiUrl(app: Application, config: Config): string {
  const address = app.server.addresses()[0];
  const port = typeof address === 'object' ? address.port : config.api.port;
  const host = ['', '0.0.0.0', '::'].includes(config.api.host) ? '127.0.0.1' : config.api.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export async function chat(io: CliIo, options: { phone: string; name?: string }): Promise<void> {
  const config = readConfig(io);
  // The terminal is the conversation: logs go to stderr, and only warnings unless LOG_LEVEL asks for more.
  const log = createLogger({
    level: config.logLevel === 'info' ? 'warn' : config.logLevel,
    destination: 'stderr',
  });
  let session: ConsoleChat | undefined;
  const channel = createConsoleChannel({ output: io.stdout, onDelivered: () => session?.prompt() });
  const app = await createApplication({ config, log, channel }).catch((error: unknown) => {
    throw ownsStateDir(
      error,
      config,
      'promptpipe chat',
      'the terminal chat runs its own engine, so stop the server first (Ctrl-C), chat, then start it again; or ' +
        "talk to the coach through the server's own channel (a participant's web-chat link with PROMPTPIPE_CHANNEL=webchat)",
    );
  });
  await app.start();
  try {
    let participant = await app.participants.findByPhone(options.phone);
    const greet = participant === undefined;
    if (participant) {
      io.stdout.write(
        `Continuing the conversation of ${participant.phoneNumber} (${participant.id}). /quit to leave.\n`,
      );
    } else {
      participant = await app.participants.enroll(
        { phoneNumber: options.phone, ...(options.name ? { name: options.name } : {}) },
        { greet: false, source: 'cli' },
      );
      io.stdout.write(`Enrolled ${participant.phoneNumber} as ${participant.id}. /quit to leave.\n`);
    }
    session = startConsoleChat({
      input: io.stdin,
      output: io.stdout,
      phoneNumber: participant.phoneNumber,
      inbound: app.inbound,
      awaitingCoach: greet,
    });
    // Greeted after the banner, so the greeting appears below it; its delivery draws the first prompt.
    if (greet) {
      await app.flow.greet(participant.id).catch((error: unknown) => {
        log.error({ error: String(error) }, 'greeting failed');
        session?.prompt();
      });
    }
    await session.finished;
  } finally {
    await app.stop();
  }
}

export async function migrate(io: CliIo): Promise<void> {
  const config = readConfig(io);
  const store = await openStore(config, logger(config, 'stderr')).catch((error: unknown) => {
    throw ownsStateDir(error, config, 'promptpipe migrate', 'the server migrated the database when it started');
  });
  await store.close();
  io.stdout.write('database is up to date\n');
}
