/**
 * `promptpipe export --out <dir>`: one file per table plus `codebook.md`. Each file is written under a temporary
 * name (`.<name>.partial`) and all are renamed only when every table was written, so a failed export never leaves a
 * file that looks complete; the temporary files are removed on failure.
 */
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { renderCodebook } from './codebook.ts';
import { exportTables } from './export-tables.ts';
import type { ExportContext, ExportFormat, ExportTableName } from './export-types.ts';
import { tableStream } from './table-stream.ts';

export interface ExportProgress {
  tableStarted(table: ExportTableName): void;
  rowWritten(): void;
  tableFinished(table: ExportTableName, rows: number): void;
}

export interface ExportResult {
  directory: string;
  files: { file: string; rows: number }[];
}

export async function exportToDirectory(options: {
  directory: string;
  format: ExportFormat;
  context: ExportContext;
  version: string;
  exportedAt: Date;
  progress?: ExportProgress;
}): Promise<ExportResult> {
  const { directory, format, context, progress } = options;
  await mkdir(directory, { recursive: true });
  const written: { file: string; temporary: string; rows: number }[] = [];
  try {
    for (const table of exportTables) {
      const file = `${table.name}.${format}`;
      const temporary = join(directory, `.${file}.partial`);
      written.push({ file, temporary, rows: 0 });
      const entry = written[written.length - 1] as { rows: number };
      progress?.tableStarted(table.name);
      await pipeline(
        tableStream(table, context, format, () => {
          entry.rows += 1;
          progress?.rowWritten();
        }),
        createWriteStream(temporary),
      );
      progress?.tableFinished(table.name, entry.rows);
    }
    const codebookTemporary = join(directory, '.codebook.md.partial');
    written.push({ file: 'codebook.md', temporary: codebookTemporary, rows: 0 });
    await writeFile(
      codebookTemporary,
      renderCodebook({
        format,
        filter: context.filter,
        pseudonymized: context.pseudonymizer !== undefined,
        exportedAt: options.exportedAt,
        version: options.version,
      }),
    );
    for (const item of written) await rename(item.temporary, join(directory, item.file));
  } catch (error) {
    await Promise.all(written.map((item) => rm(item.temporary, { force: true })));
    throw error;
  }
  return { directory, files: written.map(({ file, rows }) => ({ file, rows })) };
}
