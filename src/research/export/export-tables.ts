import type { ExportTable, ExportTableName } from './export-types.ts';
import { allocationsTable } from './tables/allocations-table.ts';
import { auditTable } from './tables/audit-table.ts';
import { dailyOutcomesTable } from './tables/daily-outcomes-table.ts';
import { decisionsTable } from './tables/decisions-table.ts';
import { eventsTable } from './tables/events-table.ts';
import { jobsTable } from './tables/jobs-table.ts';
import { messagesTable } from './tables/messages-table.ts';
import { participantsTable } from './tables/participants-table.ts';
import { ratingsTable } from './tables/ratings-table.ts';

/** Every exported table, in the order the files are written and documented. */
export const exportTables: readonly ExportTable[] = [
  participantsTable,
  messagesTable,
  eventsTable,
  jobsTable,
  dailyOutcomesTable,
  allocationsTable,
  decisionsTable,
  auditTable,
  ratingsTable,
];

export function exportTable(name: ExportTableName): ExportTable {
  const table = exportTables.find((candidate) => candidate.name === name);
  if (!table) throw new Error(`unknown export table ${name}`);
  return table;
}
