/**
 * `promptpipe participants import <file.csv> [--partial] [--dry-run] [--json]`: validates every row, enrolls (a
 * progress bar on a terminal), and queues the greetings at `ENROLL_GREETING_RATE`; the running server (`promptpipe
 * serve`) delivers them. Prints a summary with the rows that need attention, or with `--json` the whole outcome. The caller exits with code 1 when rows are invalid (and, without --partial, nobody was enrolled).
 */
import { readFile } from 'node:fs/promises';
import cliProgress from 'cli-progress';
import { AppError } from '../domain/errors.ts';
import { readCsvImport } from '../research/import/import-input.ts';
import { type ImportService, importOutcomeJson, importSummary } from '../research/import/import-service.ts';

interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

/** The CSV file's bytes, or an error naming the file. */
export async function readImportFile(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (error) {
    throw new AppError(
      'invalid_input',
      `cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

export async function runImport(
  file: string,
  options: { partial?: boolean; dryRun?: boolean; json?: boolean },
  dependencies: { imports: ImportService; stdout: Output; stderr: Output },
): Promise<{ failed: boolean }> {
  const rows = readCsvImport(await readImportFile(file), { extraColumns: dependencies.imports.extraColumns });
  const bar = dependencies.stderr.isTTY
    ? new cliProgress.SingleBar(
        { format: 'import [{bar}] {value}/{total} participants', stream: dependencies.stderr as NodeJS.WritableStream },
        cliProgress.Presets.shades_classic,
      )
    : undefined;
  let started = false;
  const outcome = await dependencies.imports.run(rows, {
    partial: options.partial ?? false,
    dryRun: options.dryRun ?? false,
    onRow: (done, total) => {
      if (!bar) return;
      if (!started) bar.start(total, 0);
      started = true;
      bar.update(done);
    },
  });
  if (started) bar?.stop();
  if (options.json) {
    dependencies.stdout.write(`${JSON.stringify(importOutcomeJson(outcome), null, 2)}\n`);
    return { failed: outcome.errors.length > 0 };
  }
  dependencies.stdout.write(`${importSummary(outcome)}\n`);
  for (const error of outcome.errors)
    dependencies.stdout.write(`  row ${error.row} ${error.field}: ${error.problem}\n`);
  for (const row of outcome.skipped) {
    dependencies.stdout.write(`  row ${row.row} ${row.phoneNumber}: skipped, ${row.reason} (${row.participantId})\n`);
  }
  if (outcome.greetings.queued > 0) {
    dependencies.stdout.write(
      `  ${outcome.greetings.queued} greeting(s) queued at ${outcome.greetings.ratePerMinute}/min ` +
        `(${outcome.greetings.firstAt} → ${outcome.greetings.lastAt}); the running server sends them\n`,
    );
  }
  return { failed: outcome.errors.length > 0 };
}
