/**
 * `promptpipe serve | chat | migrate | participants list | participants enroll …`: thin commands over the one
 * composition root (`src/main.ts`). Each reads the configuration once, does its job, and shuts down cleanly.
 */
import { Command, CommanderError, Option } from 'commander';
import { participantJson } from '../api/views.ts';
import { createConsoleChannel } from '../channels/console/console-channel.ts';
import { type ConsoleChat, startConsoleChat } from '../channels/console/console-chat.ts';
import { type Config, loadConfig, readEnvironment } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import { PARTICIPANT_STATUSES, type ParticipantStatus } from '../domain/participant.ts';
import { type Application, type ApplicationLogger, createApplication, openStore, VERSION } from '../main.ts';
import { createLogger } from '../observability/log.ts';
import { extractOriginalFlags, type OriginalFlags } from '../original/original-flags.ts';
import { IMPORT_COLUMNS } from '../research/import/import-input.ts';
import { announceStateDirServer } from '../store/sqlite/state-dir-lock.ts';
import { registerEvalCommand } from './eval-command.ts';
import { type ExportCommandOptions, runExport } from './export-command.ts';
import { readImportFile, runImport } from './import-command.ts';
import { type MigrateFromOriginalOptions, runMigrateFromOriginal } from './migrate-from-original-command.ts';
import { pauseOrResume } from './pause-command.ts';
import { callRunningServer, isStateDirInUse, type RunningServer, runningServer } from './running-server.ts';
import { registerStaffCommands } from './staff-command.ts';
import { registerWhatsAppCommands } from './whatsapp-commands.ts';

/** Where the commands write; replaceable in tests. */
export interface CliIo {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Registers the shutdown signal handlers of `serve` / `chat`. */
  onSignal(signal: 'SIGINT' | 'SIGTERM', handler: () => void): void;
  exit(code: number): void;
  /** Settings given as the original PromptPipe's flags (`--api-addr`…, see runCli), over the environment. */
  originalFlags?: Pick<OriginalFlags, 'settings' | 'notes'>;
}

export const processIo: CliIo = {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  onSignal: (signal, handler) => process.on(signal, handler),
  exit: (code) => process.exit(code),
};

function readConfig(io: CliIo): Config {
  const flags = io.originalFlags;
  return loadConfig({ ...readEnvironment(), ...flags?.settings }, { notes: flags?.notes ?? [] });
}

function logger(config: Config, destination: 'stdout' | 'stderr' = 'stdout'): ApplicationLogger {
  return createLogger({ level: config.logLevel, destination });
}

/**
 * One-shot commands (list, enroll, import, export) print their own result: the server's start-up warnings (no model,
 * no webhook URL) are not about the command, so only errors are logged unless LOG_LEVEL asks for debug or trace.
 */
function commandLogger(config: Config): ApplicationLogger {
  const level = config.logLevel === 'info' || config.logLevel === 'warn' ? 'error' : config.logLevel;
  return createLogger({ level, destination: 'stderr' });
}

/** A first signal shuts down gracefully; a second one, while that is under way, exits at once. */
function onShutdownSignals(io: CliIo, log: ApplicationLogger, shutdown: () => Promise<void>): void {
  let shuttingDown = false;
  const handle = (): void => {
    if (shuttingDown) {
      log.warn({}, 'second signal: exiting without waiting');
      io.exit(1);
      return;
    }
    shuttingDown = true;
    log.info({}, 'shutting down: finishing the work in flight (signal again to force)');
    shutdown().then(
      () => io.exit(0),
      (error: unknown) => {
        log.error({ error: String(error) }, 'shutdown failed');
        io.exit(1);
      },
    );
  };
  io.onSignal('SIGINT', handle);
  io.onSignal('SIGTERM', handle);
}

async function serve(io: CliIo): Promise<void> {
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

/** The refusal of a command that needs the state directory the running server holds, saying what to do instead. */
function ownsStateDir(error: unknown, config: Config, command: string, instead: string): unknown {
  if (!isStateDirInUse(error)) return error;
  const server = runningServer(config);
  const where = server ? ` (pid ${server.pid}, ${server.apiUrl})` : '';
  return new AppError(
    'conflict',
    `${command} needs the state directory ${config.storage.stateDir}, which the running server${where} holds: ` +
      `${instead}. (SQLite allows one process per state directory; reading commands such as "participants list" ` +
      'and "export" work beside the server.)',
  );
}

async function chat(io: CliIo, options: { phone: string; name?: string }): Promise<void> {
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

async function migrate(io: CliIo): Promise<void> {
  const config = readConfig(io);
  const store = await openStore(config, logger(config, 'stderr')).catch((error: unknown) => {
    throw ownsStateDir(error, config, 'promptpipe migrate', 'the server migrated the database when it started');
  });
  await store.close();
  io.stdout.write('database is up to date\n');
}

async function listParticipants(io: CliIo, options: { status?: string }): Promise<void> {
  const config = readConfig(io);
  const store = await openStore(config, commandLogger(config), { besideServer: 'read' });
  try {
    const filter = options.status ? { status: options.status as ParticipantStatus } : {};
    const participants = await store.participants.list(filter);
    io.stdout.write(`${JSON.stringify(participants.map(participantJson), null, 2)}\n`);
  } finally {
    await store.close();
  }
}

interface EnrollOptions {
  phone: string;
  name?: string;
  gender?: string;
  ethnicity?: string;
  background?: string;
  timezone?: string;
  language?: string;
  channel?: string;
  greet: boolean;
}

async function enrollParticipant(io: CliIo, options: EnrollOptions): Promise<void> {
  const config = readConfig(io);
  let app: Application;
  try {
    app = await createApplication({ config, log: commandLogger(config) });
  } catch (error) {
    const server = isStateDirInUse(error) ? runningServer(config) : undefined;
    if (!server) throw error;
    return enrollThroughServer(io, config, server, options);
  }
  try {
    const participant = await app.participants.enroll(
      {
        phoneNumber: options.phone,
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(options.gender !== undefined ? { gender: options.gender } : {}),
        ...(options.ethnicity !== undefined ? { ethnicity: options.ethnicity } : {}),
        ...(options.background !== undefined ? { background: options.background } : {}),
        ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
        ...(options.language !== undefined ? { language: options.language } : {}),
        ...(options.channel !== undefined ? { channel: options.channel } : {}),
      },
      { greet: options.greet, source: 'cli' },
    );
    // Deliver the greeting now rather than leave it to the next server start (the outbox would, too).
    await app.runner.runDue();
    io.stdout.write(`${JSON.stringify(participantJson(participant), null, 2)}\n`);
  } finally {
    await app.stop();
  }
}

/** `participants enroll` while the server owns the state directory: `POST /conversation/participants`. */
async function enrollThroughServer(io: CliIo, config: Config, server: RunningServer, options: EnrollOptions) {
  if (!options.greet) {
    throw new AppError('invalid_input', '--no-greet needs the server stopped: its API always greets a new participant');
  }
  const fields = ['name', 'gender', 'ethnicity', 'background', 'timezone', 'language', 'channel'] as const;
  const body = {
    phone_number: options.phone,
    ...Object.fromEntries(
      fields.filter((field) => options[field] !== undefined).map((field) => [field, options[field]]),
    ),
  };
  const answer = await callRunningServer(server, config, {
    method: 'POST',
    path: '/conversation/participants',
    body: JSON.stringify(body),
    contentType: 'application/json',
  });
  if (answer.status !== 201) {
    throw new AppError('invalid_input', answer.body.message ?? `the server answered ${answer.status}`);
  }
  io.stdout.write(`${JSON.stringify(answer.body.result, null, 2)}\n`);
}

/** `participants import` while the server owns the state directory: `POST /conversation/participants/import`. */
async function importThroughServer(
  io: CliIo,
  config: Config,
  server: RunningServer,
  file: string,
  options: { partial?: boolean; dryRun?: boolean; json?: boolean },
): Promise<{ failed: boolean }> {
  const query = new URLSearchParams();
  if (options.partial) query.set('partial', 'true');
  if (options.dryRun) query.set('dry_run', 'true');
  const answer = await callRunningServer(server, config, {
    method: 'POST',
    path: `/conversation/participants/import${query.size > 0 ? `?${query}` : ''}`,
    body: await readImportFile(file),
    contentType: 'text/csv',
  });
  const result = answer.body.result as { errors?: unknown[] } | undefined;
  if (result === undefined)
    throw new AppError('invalid_input', answer.body.message ?? `the server answered ${answer.status}`);
  io.stdout.write(options.json ? `${JSON.stringify(result, null, 2)}\n` : `${answer.body.message ?? ''}\n`);
  return { failed: (result.errors?.length ?? 0) > 0 };
}

/** The command tree. `io` is where output goes; errors are reported by {@link runCli}. */
export function buildCli(io: CliIo = processIo): Command {
  const program = new Command('promptpipe')
    .description('LLM habit-coaching conversations for research studies')
    .version(VERSION)
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .showHelpAfterError()
    // Usage errors and --help end through runCli's io.exit, not process.exit (commander has printed them already).
    .exitOverride();

  // Not `isDefault`: a default command swallows a mistyped one ("too many arguments for 'serve'"); runCli runs
  // `serve` when no command is given, and commander names an unknown command with the nearest one.
  program
    .command('serve')
    .description('run the HTTP API, the channel and the scheduler (npm start)')
    .action(() => serve(io));

  program
    .command('chat')
    .description('talk to the coach in this terminal as the participant with this phone number')
    .requiredOption('--phone <phone>', 'participant phone number (enrolled first when unknown)')
    .option('--name <name>', 'name, when enrolling')
    .action((options: { phone: string; name?: string }) => chat(io, options));

  program
    .command('migrate')
    .description('create or upgrade the database schema (serve also does it on start)')
    .action(() => migrate(io));

  program
    .command('export')
    .description(
      'export the study: one file per table (participants, messages, events, jobs, daily_outcomes) + codebook.md',
    )
    .requiredOption('--out <dir>', 'directory to write the files to (created if missing)')
    .addOption(new Option('--format <format>', 'file format').choices(['csv', 'jsonl']).default('csv'))
    .option('--participant <id...>', 'only these participants (repeat or list)')
    .option('--since <date>', 'only data from this date (YYYY-MM-DD, UTC) or ISO 8601 time on')
    .option('--pseudonymize', 'hash phone numbers with EXPORT_PSEUDONYM_KEY and drop names')
    .action((options: ExportCommandOptions) => {
      const config = readConfig(io);
      return runExport(options, {
        config,
        openStore: (storeConfig, log) => openStore(storeConfig, log, { besideServer: 'read' }),
        log: commandLogger(config),
        stdout: io.stdout,
        stderr: io.stderr,
        version: VERSION,
      });
    });

  const participants = program.command('participants').description('manage participants');
  participants
    .command('list')
    .description('print the participants as JSON')
    .addOption(new Option('--status <status>', 'only this status').choices(PARTICIPANT_STATUSES))
    .action((options: { status?: string }) => listParticipants(io, options));
  participants
    .command('enroll')
    .description('enroll a participant and send the greeting')
    .requiredOption('--phone <phone>', 'phone number (national numbers use DEFAULT_COUNTRY)')
    .option('--name <name>')
    .option('--gender <gender>')
    .option('--ethnicity <ethnicity>')
    .option('--background <text>')
    .option('--timezone <zone>', 'IANA time zone, e.g. America/New_York')
    .option('--language <tag>', 'BCP 47 language tag, e.g. es or pt-BR (default DEFAULT_LANGUAGE)')
    .option('--channel <name>', 'one of the enabled channels (PROMPTPIPE_CHANNEL); default the first')
    .option('--no-greet', 'do not send the greeting')
    .action((options: EnrollOptions) => enrollParticipant(io, options));
  const pauseContext = () => {
    const config = readConfig(io);
    return {
      config,
      open: () => createApplication({ config, log: commandLogger(config) }),
      print: (text: string) => io.stdout.write(`${text}\n`),
    };
  };
  participants
    .command('pause')
    .description('pause a participant: no proactive message until resumed (vacation mode)')
    .argument('<id>', 'participant id')
    .option('--until <date>', "resume on this date (YYYY-MM-DD, the participant's time zone)")
    .action((id: string, options: { until?: string }) =>
      pauseOrResume(pauseContext(), id, { action: 'pause', until: options.until }),
    );
  participants
    .command('resume')
    .description('resume a paused participant now')
    .argument('<id>', 'participant id')
    .action((id: string) => pauseOrResume(pauseContext(), id, { action: 'resume' }));
  participants
    .command('import')
    .description(`enroll participants from a CSV file (columns: ${IMPORT_COLUMNS.join(', ')})`)
    .argument('<file>', 'CSV file, UTF-8, with a header row')
    .option('--partial', 'enroll the valid rows even when others are invalid')
    .option('--dry-run', 'validate only; enroll nobody')
    .option('--json', 'print the whole outcome (every row) as JSON instead of the summary')
    .action(async (file: string, options: { partial?: boolean; dryRun?: boolean; json?: boolean }) => {
      const config = readConfig(io);
      let app: Application;
      try {
        app = await createApplication({ config, log: commandLogger(config) });
      } catch (error) {
        const server = isStateDirInUse(error) ? runningServer(config) : undefined;
        if (!server) throw error;
        const { failed } = await importThroughServer(io, config, server, file, options);
        if (failed) io.exit(1);
        return;
      }
      let failed = false;
      try {
        ({ failed } = await runImport(file, options, { imports: app.imports, stdout: io.stdout, stderr: io.stderr }));
      } finally {
        await app.stop();
      }
      if (failed) io.exit(1);
    });

  program
    .command('migrate-from-original')
    .description(
      "import the original PromptPipe's database: participants, history, schedules, timers, receipts, responses " +
        '(a dry run that only reports, unless --apply)',
    )
    .requiredOption('--from <database>', "the original's SQLite file (state.db) or PostgreSQL DSN")
    .option('--apply', 'import, in one transaction (without it nothing is written)')
    .option('--json', 'print the report as JSON')
    .action(async (options: MigrateFromOriginalOptions) => {
      const config = readConfig(io);
      await runMigrateFromOriginal(options, {
        config,
        openStore: (storeConfig, log) => openStore(storeConfig, log),
        log: commandLogger(config),
        stdout: io.stdout,
      });
    });

  registerWhatsAppCommands(program, io);
  registerStaffCommands(program, io, async () => {
    const config = readConfig(io);
    return openStore(config, commandLogger(config));
  });
  registerEvalCommand(program, io, async () => {
    const config = readConfig(io);
    return openStore(config, commandLogger(config), { besideServer: 'read' });
  });
  return program;
}

/** Parses `argv` and runs the command; a configuration or input error is printed plainly with exit code 2. */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<void> {
  try {
    // The original PromptPipe was started as `promptpipe --api-addr :8080 …`: its flags are taken out first (as the
    // settings they stand for) and what is left is one of our commands, `serve` when none is left.
    const flags = extractOriginalFlags(argv);
    const withFlags = { ...io, originalFlags: flags };
    await buildCli(withFlags).parseAsync(flags.argv.length === 0 ? ['serve'] : flags.argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      io.exit(error.exitCode);
      return;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`promptpipe: ${message}\n`);
    io.exit(2);
  }
}
