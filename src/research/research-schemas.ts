/** Request schemas of the research endpoints (export, import, broadcasts, stats). */
import { z } from 'zod';
import { PARTICIPANT_STATUSES } from '../domain/participant.ts';
import { EXPORT_FORMATS, EXPORT_TABLES } from './export/export-types.ts';

const flag = z.enum(['true', 'false', '1', '0'], { error: () => 'must be true or false' }).optional();

export function isTrue(value: string | undefined): boolean {
  return value === 'true' || value === '1';
}

/** Every exported table, from the one list of them (a table added there is downloadable at once). */
const EXPORT_FILES = EXPORT_TABLES.flatMap((table) => EXPORT_FORMATS.map((format) => `${table}.${format}`));

export const exportParamsSchema = z.object({
  file: z.enum(EXPORT_FILES as [string, ...string[]], {
    error: () => `must be <table>.csv or <table>.jsonl with table ${EXPORT_TABLES.join(', ')}`,
  }),
});

export const exportQuerySchema = z.object({
  participant: z.union([z.string(), z.array(z.string())]).optional(),
  since: z.string().optional(),
  pseudonymize: flag,
});

export const importQuerySchema = z.object({ partial: flag, dry_run: flag });

export const broadcastBodySchema = z.object({
  text: z.string().trim().min(1, { error: 'must not be empty' }).max(4096),
  status: z
    .array(z.enum(PARTICIPANT_STATUSES as [string, ...string[]]))
    .min(1)
    .optional(),
  channel: z.string().min(1).optional(),
  dry_run: z.boolean().optional(),
});

export const statsQuerySchema = z.object({ from: z.string().optional(), to: z.string().optional() });
