/**
 * `promptpipe serve | chat | migrate | participants list | participants enroll …`: thin commands over the one
 * composition root (`src/main.ts`). Each reads the configuration once, does its job, and shuts down cleanly.
 */
import { Command, CommanderError, Option } from 'commander';
import { openStore, VERSION } from '../main.ts';
import { extractOriginalFlags } from '../original/original-flags.ts';
import { type CliIo, commandLogger, processIo, readConfig } from './cli-io.ts';
import { registerEvalCommand } from './eval-command.ts';
import { type ExportCommandOptions, runExport } from './export-command.ts';
import { type MigrateFromOriginalOptions, runMigrateFromOriginal } from './migrate-from-original-command.ts';
import { registerParticipantCommands } from './participant-commands.ts';
import { chat, migrate, serve } from './server-commands.ts';
import { registerStaffCommands } from './staff-command.ts';
import { registerWhatsAppCommands } from './whatsapp-commands.ts';

export { type CliIo, processIo } from './cli-io.ts';

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

  registerParticipantCommands(program, io);

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
