/**
 * `promptpipe export --out <dir> [--format csv|jsonl] [--participant <id>…] [--since <date>] [--pseudonymize]`.
 * A progress bar on a terminal (stderr), nothing but the summary otherwise.
 */
import { resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { Config } from '../config.ts';
import type { Log } from '../domain/log.ts';
import { exportFilter, parseFormat } from '../research/export/export-filter.ts';
import { type ExportProgress, exportToDirectory } from '../research/export/export-to-directory.ts';
import { EXPORT_TABLES } from '../research/export/export-types.ts';
import { createPseudonymizer } from '../research/export/pseudonymizer.ts';
import type { Store } from '../store/store.ts';

export interface ExportCommandOptions {
  out: string;
  format?: string;
  participant?: string[];
  since?: string;
  pseudonymize?: boolean;
}

interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
}

function progressBar(stream: Output): ExportProgress | undefined {
  if (!stream.isTTY) return undefined;
  const bar = new cliProgress.SingleBar(
    {
      format: 'export [{bar}] {value}/{total} tables | {table}: {rows} rows',
      stream: stream as NodeJS.WritableStream,
      hideCursor: true,
      clearOnComplete: false,
    },
    cliProgress.Presets.shades_classic,
  );
  let rows = 0;
  let started = false;
  return {
    tableStarted(table) {
      rows = 0;
      if (!started) bar.start(EXPORT_TABLES.length, 0, { table, rows });
      started = true;
      bar.update({ table, rows });
    },
    rowWritten() {
      rows += 1;
      if (rows % 1000 === 0) bar.update({ rows });
    },
    tableFinished(table, count) {
      bar.increment(1, { table, rows: count });
      if (table === EXPORT_TABLES[EXPORT_TABLES.length - 1]) bar.stop();
    },
  };
}

export async function runExport(
  options: ExportCommandOptions,
  dependencies: {
    config: Config;
    openStore: (config: Config, log: Log) => Promise<Store>;
    log: Log;
    stdout: Output;
    stderr: Output;
    version: string;
  },
): Promise<void> {
  const { config } = dependencies;
  // Every option is checked before the database is opened or a file is created.
  const format = parseFormat(options.format);
  const filter = exportFilter({ participants: options.participant, since: options.since });
  const pseudonymizer = options.pseudonymize
    ? createPseudonymizer(config.research.exportPseudonymKey, { requestedBy: '--pseudonymize' })
    : undefined;
  const store = await dependencies.openStore(config, dependencies.log);
  try {
    const progress = progressBar(dependencies.stderr);
    const result = await exportToDirectory({
      directory: resolve(options.out),
      format,
      context: { store, filter, pseudonymizer, defaultChannel: config.channel.kind },
      version: dependencies.version,
      exportedAt: new Date(),
      ...(progress ? { progress } : {}),
    });
    const summary = result.files.map(
      (file) => `  ${file.file}${file.file === 'codebook.md' ? '' : ` (${file.rows} rows)`}`,
    );
    dependencies.stdout.write(`exported to ${result.directory}:\n${summary.join('\n')}\n`);
  } finally {
    await store.close();
  }
}
