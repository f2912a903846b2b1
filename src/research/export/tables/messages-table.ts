import { DELIVER_MESSAGE_JOB } from '../../../channels/outbox-messenger.ts';
import type { LlmCall, Store, TranscriptEntry } from '../../../store/store.ts';
import { parsePollText } from '../../stats/poll-text-parse.ts';
import type { ExportColumn } from '../export-types.ts';
import { keysetTable } from './keyset-table.ts';

const columns: ExportColumn[] = [
  { name: 'message_id', type: 'integer', description: 'Transcript entry id; increases in recording order' },
  { name: 'participant_id', type: 'string', description: 'Participant id' },
  { name: 'created_at', type: 'timestamp', description: 'When the entry was recorded (UTC)' },
  { name: 'role', type: 'string', description: 'user, assistant, tool or system' },
  {
    name: 'kind',
    type: 'string',
    description:
      'message (participant), reply (coach), tool_call, tool_result, proactive (habit prompt, reminder, nudge), ' +
      'poll, organiser, debug, notice (broadcasts and notices)',
  },
  { name: 'module', type: 'string', description: 'INTAKE, FEEDBACK, scheduler, api, broadcast…' },
  { name: 'content', type: 'string', description: 'The text (a poll: question [option | option]); free text is kept' },
  { name: 'poll_question', type: 'string', description: 'For a participant poll answer: the question answered' },
  { name: 'poll_answer', type: 'string', description: 'For a participant poll answer: the option chosen' },
  { name: 'tool_names', type: 'string', description: 'tool_call: the tools called, separated by ";"' },
  { name: 'tool_calls', type: 'json', description: 'tool_call: [{id, name, arguments}] exactly as the model sent' },
  { name: 'tool_call_id', type: 'string', description: 'tool_result: the call it answers' },
  { name: 'tool_name', type: 'string', description: 'tool_result: the tool that ran' },
  { name: 'source_message_id', type: 'string', description: 'The participant message this entry answers' },
  { name: 'outbound_id', type: 'string', description: 'Outbound delivery id when sent to the participant' },
  {
    name: 'delivery_status',
    type: 'string',
    description:
      'Outbound entries: queued, sending, sent (the channel accepted it), failed or cancelled, from the outbox, ' +
      'then the channel receipts (delivered, read, undelivered); not_delivered: only recorded, never sent (the ' +
      'webhook channel without PROMPTPIPE_WEBHOOK_URL; delivery_error says why); empty for entries never sent to ' +
      'the participant',
  },
  { name: 'delivery_status_at', type: 'timestamp', description: 'When the delivery was sent or finally failed (UTC)' },
  {
    name: 'delivery_error',
    type: 'string',
    description: 'Last delivery error (or why the message was not delivered), empty when none',
  },
  { name: 'llm_call_id', type: 'integer', description: 'The LLM call that produced this entry (provenance)' },
  { name: 'model', type: 'string', description: 'Model that produced this entry' },
  { name: 'provider_host', type: 'string', description: 'Host of the LLM provider base URL' },
  { name: 'temperature', type: 'number', description: 'Sampling temperature of the call' },
  { name: 'prompt_file', type: 'string', description: 'System prompt file used' },
  {
    name: 'prompt_version',
    type: 'string',
    description: 'First 12 hex characters of SHA-256 of the system prompt text sent',
  },
  { name: 'prompt_tokens', type: 'integer', description: 'Prompt tokens of the call, as the provider reported' },
  { name: 'completion_tokens', type: 'integer', description: 'Completion tokens of the call' },
  { name: 'llm_latency_ms', type: 'integer', description: 'Wall-clock latency of the call in milliseconds' },
  { name: 'llm_outcome', type: 'string', description: 'success, or the error code of the call' },
];

/** The outbox's view of a job: queued, sending, sent (the channel accepted it), failed, cancelled. */
const DELIVERY_STATUS: Record<string, string> = {
  pending: 'queued',
  running: 'sending',
  completed: 'sent',
  failed: 'failed',
  cancelled: 'cancelled',
};

interface Delivery {
  status: string;
  at: Date | undefined;
  error: string | undefined;
}

/**
 * The delivery of each outbound entry of a page, from its outbox job: the job is created in the same transaction as
 * the entry, with the same timestamp, so one query over the page's participants and time span finds them all.
 */
async function deliveriesOf(store: Store, page: readonly TranscriptEntry[]): Promise<Map<string, Delivery>> {
  const outbound = page.filter((entry) => entry.outboundId !== undefined);
  const result = new Map<string, Delivery>();
  if (outbound.length === 0) return result;
  const times = outbound.map((entry) => entry.createdAt.getTime());
  const participantIds = [...new Set(outbound.map((entry) => entry.participantId))];
  const jobs = await store.research.jobsCreatedBetween(
    DELIVER_MESSAGE_JOB,
    participantIds,
    new Date(Math.min(...times)),
    new Date(Math.max(...times)),
  );
  for (const job of jobs) {
    const id = (job.payload as { message?: { id?: unknown } }).message?.id;
    if (typeof id !== 'string') continue;
    const finished = job.status === 'completed' || job.status === 'failed';
    result.set(id, {
      status: DELIVERY_STATUS[job.status] ?? job.status,
      at: finished ? job.updatedAt : undefined,
      error: job.lastError,
    });
  }
  // Channel receipts (sent, delivered, read, failed…) are more precise than the outbox: the newest wins.
  const receipts = await store.deliveries.latest(
    outbound.flatMap((entry) => (entry.outboundId ? [entry.outboundId] : [])),
  );
  for (const [outboundId, receipt] of receipts) {
    result.set(outboundId, {
      status: receipt.status,
      at: receipt.createdAt,
      error: receipt.errorMessage ?? receipt.errorCode ?? result.get(outboundId)?.error,
    });
  }
  return result;
}

/** The LLM calls that produced a page's entries, by id. */
async function callsOf(store: Store, page: readonly TranscriptEntry[]): Promise<Map<number, LlmCall>> {
  const ids = [...new Set(page.flatMap((entry) => (entry.llmCallId === undefined ? [] : [entry.llmCallId])))];
  return new Map((await store.llmCalls.getMany(ids)).map((call) => [call.id, call]));
}

export const messagesTable = keysetTable({
  name: 'messages',
  description:
    'The full transcript: every participant message, reply, tool call and result, proactive message and poll ' +
    '(with answers), with module, model, prompt version, source message and delivery status.',
  columns,
  page: ({ store, filter }, after: number | undefined, limit) => store.research.transcriptPage(filter, after, limit),
  key: (entry) => entry.id,
  pageData: async ({ store }, page) => ({
    calls: await callsOf(store, page),
    deliveries: await deliveriesOf(store, page),
  }),
  row(entry, { pseudonymizer }, { calls, deliveries }) {
    const call = entry.llmCallId === undefined ? undefined : calls.get(entry.llmCallId);
    const poll = entry.role === 'user' ? parsePollText(entry.content) : undefined;
    const receipt = entry.outboundId === undefined ? undefined : deliveries.get(entry.outboundId);
    return {
      message_id: entry.id,
      participant_id: entry.participantId,
      created_at: entry.createdAt.toISOString(),
      role: entry.role,
      kind: entry.kind,
      module: entry.module ?? null,
      content: entry.content,
      poll_question: poll?.question ?? null,
      poll_answer: poll?.option ?? null,
      tool_names: entry.toolCalls?.map((toolCall) => toolCall.name).join(';') ?? null,
      tool_calls: entry.toolCalls
        ? (pseudonymizer ? pseudonymizer.json(entry.toolCalls) : entry.toolCalls).map((toolCall) => ({
            ...toolCall,
          }))
        : null,
      tool_call_id: entry.toolCallId ?? null,
      tool_name: entry.toolName ?? null,
      source_message_id: entry.sourceMessageId ?? null,
      outbound_id: entry.outboundId ?? null,
      delivery_status: receipt?.status ?? null,
      delivery_status_at: receipt?.at?.toISOString() ?? null,
      delivery_error: receipt?.error ?? null,
      llm_call_id: entry.llmCallId ?? null,
      model: entry.model ?? call?.model ?? null,
      provider_host: call?.providerHost ?? null,
      temperature: call?.temperature ?? null,
      prompt_file: call?.promptFile ?? null,
      prompt_version: call?.promptVersion ?? null,
      prompt_tokens: call?.promptTokens ?? null,
      completion_tokens: call?.completionTokens ?? null,
      llm_latency_ms: call?.latencyMs ?? null,
      llm_outcome: call?.outcome ?? null,
    };
  },
});
