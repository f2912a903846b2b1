import type { ExportFilter } from './export-types.ts';

/**
 * Whether a row is within the export's filter: its participant (none: left out when participants are named) and its
 * time (undefined: the table filters by time itself, or not at all).
 */
export function rowFilter(filter: ExportFilter): (participantId: string | null | undefined, at?: Date) => boolean {
  const wanted = new Set(filter.participantIds);
  return (participantId, at) => {
    if (wanted.size > 0 && (!participantId || !wanted.has(participantId))) return false;
    if (filter.since && at && at < filter.since) return false;
    return true;
  };
}
