/**
 * Allocation at enrollment, inside the enrollment's transaction: lock the stratum's block state, take its next
 * position, record the allocation. The lock (a row lock on PostgreSQL, the single writer on SQLite) is what keeps a
 * block's sequence correct when two enrollments of one stratum (two instances) commit at the same moment; the
 * allocation's primary key is what makes it once per participant.
 */
import type { Participant } from '../domain/participant.ts';
import type { Allocation } from '../store/allocations.ts';
import type { StoreRepositories } from '../store/store.ts';
import { nextAllocation, stratumOf } from './allocation-sequence.ts';
import type { StudyInForce } from './study-design-file.ts';

/** What a stratum may be built from: the participant's fields and the bulk import's columns (`import.<column>`). */
export function stratumFields(
  participant: Pick<Participant, 'gender' | 'ethnicity' | 'timezone' | 'channel' | 'language'>,
  importColumns: Readonly<Record<string, string>> = {},
): Record<string, string> {
  const fields: Record<string, string> = {
    language: participant.language ?? '',
    channel: participant.channel,
    gender: participant.gender,
    ethnicity: participant.ethnicity,
    timezone: participant.timezone,
  };
  for (const [column, value] of Object.entries(importColumns)) fields[`import.${column.toLowerCase()}`] = value;
  return fields;
}

export async function allocateParticipant(
  tx: Pick<StoreRepositories, 'allocations'>,
  study: StudyInForce,
  request: { participantId: string; fields: Readonly<Record<string, string>>; now: Date },
): Promise<Allocation> {
  const { design } = study;
  const stratum = stratumOf(design, request.fields);
  const state = await tx.allocations.lockBlockState(design.study.id, stratum);
  const next = nextAllocation(design, stratum, state);
  await tx.allocations.saveBlockState(design.study.id, stratum, next.state);
  const allocation: Allocation = {
    participantId: request.participantId,
    studyId: design.study.id,
    armId: next.armId,
    allocatedArmId: next.armId,
    stratum,
    method: design.allocation.method,
    blockIndex: next.block?.index ?? null,
    blockSize: next.block?.size ?? null,
    blockPosition: next.block?.position ?? null,
    stratumSequence: next.state.allocated,
    draw: next.draw,
    designHash: study.hash,
    allocatedAt: request.now,
    override: null,
  };
  await tx.allocations.record(allocation);
  return allocation;
}
