import type { ExportColumn } from '../export-types.ts';
import { keysetTable } from './keyset-table.ts';

const FINISHED = new Set(['completed', 'failed']);

const columns: ExportColumn[] = [
  { name: 'job_id', type: 'string', description: 'Job id' },
  {
    name: 'kind',
    type: 'string',
    description: 'daily_prompt, deliver_message, daily_prompt_reminder, broadcast_message, …',
  },
  { name: 'participant_id', type: 'string', description: 'Participant id, empty for study-wide jobs' },
  { name: 'status', type: 'string', description: 'pending, running, completed, failed or cancelled' },
  { name: 'run_at', type: 'timestamp', description: 'When the job was due (UTC)' },
  { name: 'attempts', type: 'integer', description: 'Attempts made' },
  { name: 'max_attempts', type: 'integer', description: 'Attempts allowed' },
  {
    name: 'outcome',
    type: 'string',
    description: 'completed, failed: <last error>, cancelled, or pending/running while not finished',
  },
  { name: 'last_error', type: 'string', description: 'Error of the last failed attempt' },
  {
    name: 'lateness_ms',
    type: 'integer',
    description: 'Finished jobs: milliseconds from run_at to when the job finished (updated_at); empty otherwise',
  },
  { name: 'dedup_key', type: 'string', description: 'The key naming "the" pending job of its kind' },
  { name: 'created_at', type: 'timestamp', description: 'When it was enqueued (UTC)' },
  { name: 'updated_at', type: 'timestamp', description: 'Last change (UTC): for finished jobs, the finish time' },
  { name: 'payload', type: 'json', description: 'The job input (phone fields hashed with --pseudonymize)' },
];

export const jobsTable = keysetTable({
  name: 'jobs',
  description: 'Every durable job (prompts, reminders, deliveries, broadcasts) with its outcome and lateness.',
  columns,
  page: ({ store, filter }, after: string | undefined, limit) => store.research.jobsPage(filter, after, limit),
  key: (job) => job.id,
  row: (job, { pseudonymizer }) => ({
    job_id: job.id,
    kind: job.kind,
    participant_id: job.participantId ?? null,
    status: job.status,
    run_at: job.runAt.toISOString(),
    attempts: job.attempts,
    max_attempts: job.maxAttempts,
    outcome: job.status === 'failed' ? `failed: ${job.lastError ?? ''}` : job.status,
    last_error: job.lastError ?? null,
    lateness_ms: FINISHED.has(job.status) ? Math.max(0, job.updatedAt.getTime() - job.runAt.getTime()) : null,
    dedup_key: job.dedupKey ?? null,
    created_at: job.createdAt.toISOString(),
    updated_at: job.updatedAt.toISOString(),
    payload: pseudonymizer ? pseudonymizer.json(job.payload) : job.payload,
  }),
});
