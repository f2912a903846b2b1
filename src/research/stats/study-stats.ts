/**
 * `GET /stats`: study figures over the whole study and per UTC day, computed by streaming the store (participants,
 * the daily outcomes, LLM calls, delivery jobs), never loading a table.
 *
 * Definitions: a prompt is *answered* when the participant wrote anything before the next daily prompt; the median
 * latency is over answered prompts (prompt → first message); the Done rate is prompts answered "Done" / prompts sent;
 * reminders are the no-reply reminders sent; failed deliveries are outbox deliveries that exhausted their retries.
 */
import { conversationStateOf } from '../../domain/participant-data.ts';
import { keysetPages } from '../../store/keyset-pages.ts';
import type { Store } from '../../store/store.ts';
import { dailyOutcomesTable } from '../export/tables/daily-outcomes-table.ts';

export interface StatsRange {
  from: Date | undefined;
  /** Exclusive. */
  to: Date | undefined;
}

export interface Figures {
  prompts_sent: number;
  prompts_answered: number;
  median_reply_latency_seconds: number | null;
  done: number;
  done_rate: number | null;
  reminders_sent: number;
  llm_calls: number;
  llm_errors: number;
  llm_prompt_tokens: number;
  llm_completion_tokens: number;
  llm_total_tokens: number;
  failed_deliveries: number;
}

export interface StudyStats {
  from: string | null;
  to: string | null;
  participants: {
    total: number;
    by_status: Record<string, number>;
    by_sub_state: Record<string, number>;
    by_status_and_sub_state: Record<string, Record<string, number>>;
  };
  totals: Figures;
  days: (Figures & { date: string })[];
}

class FigureBuilder {
  promptsSent = 0;
  answered = 0;
  latencies: number[] = [];
  done = 0;
  reminders = 0;
  llmCalls = 0;
  llmErrors = 0;
  promptTokens = 0;
  completionTokens = 0;
  totalTokens = 0;
  failedDeliveries = 0;

  figures(): Figures {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    const median =
      sorted.length === 0
        ? null
        : sorted.length % 2 === 1
          ? (sorted[middle] as number)
          : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
    return {
      prompts_sent: this.promptsSent,
      prompts_answered: this.answered,
      median_reply_latency_seconds: median,
      done: this.done,
      done_rate: this.promptsSent === 0 ? null : this.done / this.promptsSent,
      reminders_sent: this.reminders,
      llm_calls: this.llmCalls,
      llm_errors: this.llmErrors,
      llm_prompt_tokens: this.promptTokens,
      llm_completion_tokens: this.completionTokens,
      llm_total_tokens: this.totalTokens,
      failed_deliveries: this.failedDeliveries,
    };
  }
}

const PAGE = 500;

export async function computeStudyStats(store: Store, range: StatsRange): Promise<StudyStats> {
  const inRange = (at: Date): boolean =>
    (range.from === undefined || at >= range.from) && (range.to === undefined || at < range.to);
  const totals = new FigureBuilder();
  const days = new Map<string, FigureBuilder>();
  const day = (at: Date): FigureBuilder => {
    const key = at.toISOString().slice(0, 10);
    let builder = days.get(key);
    if (!builder) {
      builder = new FigureBuilder();
      days.set(key, builder);
    }
    return builder;
  };
  const both = (at: Date, apply: (builder: FigureBuilder) => void): void => {
    apply(totals);
    apply(day(at));
  };

  const participants: StudyStats['participants'] = {
    total: 0,
    by_status: {},
    by_sub_state: {},
    by_status_and_sub_state: {},
  };
  const participantPages = keysetPages(
    (after: string | undefined, limit) => store.research.participantsPage({}, after, limit),
    PAGE,
  );
  for await (const page of participantPages) {
    for (const participant of page) {
      const flow = await store.flowStates.get(participant.id);
      const subState = conversationStateOf(flow?.stateData ?? {});
      participants.total += 1;
      participants.by_status[participant.status] = (participants.by_status[participant.status] ?? 0) + 1;
      participants.by_sub_state[subState] = (participants.by_sub_state[subState] ?? 0) + 1;
      const byStatus = participants.by_status_and_sub_state[participant.status] ?? {};
      byStatus[subState] = (byStatus[subState] ?? 0) + 1;
      participants.by_status_and_sub_state[participant.status] = byStatus;
    }
  }

  const context = {
    store,
    filter: { participantIds: [], since: range.from },
    pseudonymizer: undefined,
    defaultChannel: '',
  };
  for await (const row of dailyOutcomesTable.rows(context)) {
    const sentAt = new Date(String(row['prompt_sent_at_utc']));
    if (!inRange(sentAt)) continue;
    both(sentAt, (builder) => {
      builder.promptsSent += 1;
      if (row['first_reply_at'] !== null) {
        builder.answered += 1;
        builder.latencies.push(Number(row['reply_latency_seconds']));
      }
      if (row['outcome'] === 'Done') builder.done += 1;
      if (row['reminder_sent'] === true) builder.reminders += 1;
    });
  }

  const callRange = { ...(range.from ? { since: range.from } : {}), ...(range.to ? { until: range.to } : {}) };
  const callPages = keysetPages(
    (after: number | undefined, limit) => store.research.llmCallsPage(callRange, after, limit),
    PAGE,
  );
  for await (const calls of callPages) {
    for (const call of calls) {
      both(call.createdAt, (builder) => {
        builder.llmCalls += 1;
        if (call.outcome !== 'success') builder.llmErrors += 1;
        builder.promptTokens += call.promptTokens ?? 0;
        builder.completionTokens += call.completionTokens ?? 0;
        builder.totalTokens += call.totalTokens ?? 0;
      });
    }
  }

  const jobPages = keysetPages((after: string | undefined, limit) => store.research.jobsPage({}, after, limit), PAGE);
  for await (const jobs of jobPages) {
    for (const job of jobs) {
      if (job.kind !== 'deliver_message' || job.status !== 'failed' || !inRange(job.updatedAt)) continue;
      both(job.updatedAt, (builder) => {
        builder.failedDeliveries += 1;
      });
    }
  }

  return {
    from: range.from?.toISOString() ?? null,
    to: range.to?.toISOString() ?? null,
    participants,
    totals: totals.figures(),
    days: [...days.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([date, builder]) => ({ date, ...builder.figures() })),
  };
}
