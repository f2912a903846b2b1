/**
 * `participants list | enroll | pause | resume | import`. Enrolling and importing go through the running server's API
 * when it holds the state directory; listing reads the database beside it.
 */
import { type Command, Option } from 'commander';
import { participantJson } from '../api/views.ts';
import type { Config } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import { PARTICIPANT_STATUSES, type ParticipantStatus } from '../domain/participant.ts';
import { createApplication, openStore } from '../main.ts';
import type { ParticipantDetails } from '../participants/participant-service-types.ts';
import { IMPORT_COLUMNS } from '../research/import/import-input.ts';
import { type CliIo, commandLogger, readConfig } from './cli-io.ts';
import { readImportFile, runImport } from './import-command.ts';
import { pauseOrResume } from './pause-command.ts';
import { callRunningServer, openOrFindServer, type RunningServer } from './running-server.ts';

export function registerParticipantCommands(program: Command, io: CliIo): void {
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
      const { app, server } = await openOrFindServer(config, () =>
        createApplication({ config, log: commandLogger(config) }),
      );
      if (server) {
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

interface EnrollOptions extends ParticipantDetails {
  phone: string;
  greet: boolean;
}

async function enrollParticipant(io: CliIo, options: EnrollOptions): Promise<void> {
  const config = readConfig(io);
  const { app, server } = await openOrFindServer(config, () =>
    createApplication({ config, log: commandLogger(config) }),
  );
  if (server) return enrollThroughServer(io, config, server, options);
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
