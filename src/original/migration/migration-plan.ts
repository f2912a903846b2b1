/**
 * What `migrate-from-original` will import from an original PromptPipe database and what it cannot, decided before
 * anything is written (the dry run prints it; `--apply` imports exactly it). Compared with what PromptPipe already
 * holds, so a second run plans nothing new: a participant is known by the original's id (kept), a response or a
 * receipt by its import key.
 */
import { toE164 } from '../../domain/phone.ts';
import type { NewImportedReceipt, NewRecordedResponse } from '../../store/original-records.ts';
import type { Store } from '../../store/store.ts';
import type { OriginalTables } from './original-database.ts';
import {
  isImportableTimer,
  PENDING_ORIGINAL_JOB,
  type PlannedParticipant,
  type PlanParticipantOptions,
  planParticipant,
} from './plan-participant.ts';

export interface MigrationPlan {
  source: string;
  participants: PlannedParticipant[];
  /** Participants (original ids) imported by an earlier run. */
  alreadyImported: string[];
  responses: NewRecordedResponse[];
  receipts: NewImportedReceipt[];
  /** Responses and receipts imported by an earlier run. */
  recordsAlreadyImported: number;
  /** One line per thing that is not imported, saying why. */
  cannotImport: string[];
}

/** The original's stored form (digits only) as E.164, or undefined. */
function e164(phone: string, defaultCountry: string): string | undefined {
  try {
    return toE164(phone, defaultCountry);
  } catch {
    return undefined;
  }
}

const unixTime = (seconds: number): Date => new Date(seconds * 1000);

function tableNotes(counts: Record<string, number>): string[] {
  const why: Record<string, string> = {
    outbox_messages: 'queued outgoing message(s) the original never sent: not sent now either',
    registered_hooks: 'response hook(s): not needed, every enrolled participant’s messages go to the coach',
    intervention_participants: 'participant(s) of the older intervention flow: not imported',
    intervention_responses: 'response(s) of the older intervention flow: not imported',
  };
  return Object.entries(counts).map(([table, count]) => `${count} ${why[table] ?? 'row(s)'} (${table})`);
}

export async function planMigration(
  tables: OriginalTables,
  store: Pick<Store, 'participants' | 'originalRecords'>,
  options: PlanParticipantOptions,
): Promise<MigrationPlan> {
  const plan: MigrationPlan = {
    source: tables.source,
    participants: [],
    alreadyImported: [],
    responses: [],
    receipts: [],
    recordsAlreadyImported: 0,
    cannotImport: tableNotes(tables.otherCounts),
  };
  const pendingJobs = tables.jobs.filter((job) => PENDING_ORIGINAL_JOB.has(job.status));
  const phones = new Map<string, string>();
  for (const row of tables.participants) {
    const flowState = tables.flowStates.find(
      (state) => state.participantId === row.id && (state.flowType === 'conversation' || state.flowType === ''),
    );
    const jobs = pendingJobs.filter((job) => job.payload['participant_id'] === row.id);
    const planned = planParticipant(row, flowState, jobs, options);
    if ('problem' in planned) {
      plan.cannotImport.push(`participant ${row.id}: ${planned.problem}`);
      continue;
    }
    if (await store.participants.get(row.id)) {
      plan.alreadyImported.push(row.id);
      phones.set(planned.participant.phoneNumber, row.id);
      continue;
    }
    const holder = await store.participants.getByPhone(planned.participant.phoneNumber);
    const twin = phones.get(planned.participant.phoneNumber);
    if (holder || twin) {
      plan.cannotImport.push(
        `participant ${row.id}: ${planned.participant.phoneNumber} is already enrolled as participant ${holder?.id ?? twin}`,
      );
      continue;
    }
    phones.set(planned.participant.phoneNumber, row.id);
    plan.participants.push(planned);
    for (const note of planned.notes) plan.cannotImport.push(`participant ${row.id}: ${note}`);
  }
  const importedIds = new Set(plan.participants.map((planned) => planned.participant.id));
  for (const job of pendingJobs) {
    const owner = typeof job.payload['participant_id'] === 'string' ? job.payload['participant_id'] : '';
    if (!isImportableTimer(job)) plan.cannotImport.push(`pending job ${job.id} of kind ${job.kind}: not imported`);
    else if (!importedIds.has(owner) && !plan.alreadyImported.includes(owner)) {
      plan.cannotImport.push(`pending ${job.kind} job ${job.id}: its participant ${owner || '(none)'} is not imported`);
    }
  }

  const responses = tables.responses.map((row) => ({ row, key: `original:responses:${row.id}` }));
  const receipts = tables.receipts.map((row) => ({ row, key: `original:receipts:${row.id}` }));
  const known = await store.originalRecords.existingImportKeys([...responses, ...receipts].map((entry) => entry.key));
  plan.recordsAlreadyImported = known.size;
  for (const { row, key } of responses) {
    if (known.has(key)) continue;
    const sender = e164(row.sender, options.defaultCountry);
    if (!sender || !row.body) {
      plan.cannotImport.push(
        `response ${row.id}: ${sender ? 'its body is empty' : `sender "${row.sender}" is no phone number`}`,
      );
      continue;
    }
    const participantId = phones.get(sender);
    plan.responses.push({
      sender,
      body: row.body,
      receivedAt: unixTime(row.time),
      importKey: key,
      ...(participantId ? { participantId } : {}),
    });
  }
  for (const { row, key } of receipts) {
    if (known.has(key)) continue;
    plan.receipts.push({
      recipient: e164(row.recipient, options.defaultCountry) ?? row.recipient,
      status: row.status,
      sentAt: unixTime(row.time),
      importKey: key,
    });
  }
  return plan;
}
