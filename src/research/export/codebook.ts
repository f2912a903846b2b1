/** `codebook.md`: every file, every column, its type and meaning, and how the export was made. */
import { exportTables } from './export-tables.ts';
import type { ExportFilter, ExportFormat } from './export-types.ts';

/** Why some CSV cells start with `'`: what changes, and where the exact text is. */
export const CSV_FORMULA_NOTE =
  '- Formulas neutralised: a text cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is written ' +
  "with a single quote before it (`'=1+1`), so a spreadsheet shows it as text instead of running it (OWASP, CSV " +
  'injection). Numbers are never changed, nor is a text cell that is only a number (`-3`, a phone number such as ' +
  "`+15551230011`). To analyse the exact text, remove that one leading `'` from such cells, or export JSON Lines " +
  '(`--format jsonl`), which keeps every value exactly as recorded.';

export function renderCodebook(options: {
  format: ExportFormat;
  filter: ExportFilter;
  pseudonymized: boolean;
  exportedAt: Date;
  version: string;
}): string {
  const lines: string[] = [
    '# PromptPipe study export — codebook',
    '',
    `- Exported at: ${options.exportedAt.toISOString()} (PromptPipe ${options.version})`,
    `- Format: ${options.format === 'csv' ? 'CSV (RFC 4180, UTF-8, header row; empty cell = no value; JSON columns hold JSON text)' : 'JSON Lines (one JSON object per line, UTF-8; null = no value)'}`,
    ...(options.format === 'csv' ? [CSV_FORMULA_NOTE] : []),
    `- Participants: ${options.filter.participantIds.length > 0 ? options.filter.participantIds.join(', ') : 'all'}`,
    `- Since: ${options.filter.since ? options.filter.since.toISOString() : 'the start of the study'}`,
    '- Times are UTC ISO 8601 unless the column says local.',
    '',
    '## Pseudonymization',
    '',
    options.pseudonymized
      ? 'This export is **pseudonymized**: every phone number (participants.phone_number and phone fields inside JSON ' +
        'columns such as `to`/`from`) is replaced by `pn_` + the first 16 hex characters of HMAC-SHA-256 keyed with ' +
        '`EXPORT_PSEUDONYM_KEY`; the same key gives the same pseudonym in every export. Names are dropped (empty). ' +
        '**Free text is kept as written** (messages, backgrounds, feedback): it may still identify a participant.'
      : 'This export is **not pseudonymized**: it contains phone numbers and names. Handle it as identifiable data.',
    '',
  ];
  for (const table of exportTables) {
    lines.push(
      `## ${table.name}.${options.format}`,
      '',
      table.description,
      '',
      '| column | type | meaning |',
      '|---|---|---|',
    );
    for (const column of table.columns) {
      lines.push(`| ${column.name} | ${column.type} | ${column.description.replaceAll('|', '\\|')} |`);
    }
    lines.push('');
  }
  return lines.join('\n');
}
