/**
 * The dashboard's reads (the roster's part of the storage port, `../store.ts`): the roster, the overview's figures and the adherence
 * grid. Each is a few indexed queries whose cost does not grow with the study's history or the page's position: the
 * per-participant and per-day figures come from the study-day summary (migration 022), kept as events happen, and
 * pages are keyset pages. On SQLite the store runs them on a worker thread with its own read-only connection
 * (`sqlite/dashboard-read-worker.ts`), so a slow read never holds up a turn.
 *
 * Glossary:
 * - study day: a participant's local date on which a daily prompt was sent; it lasts until their next prompt.
 * - answered: the participant wrote anything during the study day; done: they answered the Done poll "Done".
 * - adherence: Done days ÷ prompts sent, over the whole study.
 */
import type { Participant, ParticipantStatus } from '../../domain/participant.ts';
import type { TranscriptKind } from './conversation-store.ts';

/** The roster's adherence-alert filter: any unresolved adherence alert, or one rule's. */
export const ADHERENCE_ALERT_FILTERS = ['any', 'missed-prompts', 'silent-days'] as const;
export type AdherenceAlertFilter = (typeof ADHERENCE_ALERT_FILTERS)[number];

/**
 * How each adherence rule's alert names its rule (`alerts.rule`), as an SQL LIKE pattern: the alert's rule text is
 * written by `adherenceRuleText` in safety/adherence-alerts.ts (test/web/roster-routes.test.ts holds the two together).
 */
export const ADHERENCE_RULE_PATTERNS: Record<Exclude<AdherenceAlertFilter, 'any'>, string> = {
  'missed-prompts': '% daily prompts unanswered since %',
  'silent-days': 'no message for % days since %',
};

/** A row's place in the roster's order (newest enrolment first, then id, descending). */
export interface RosterKey {
  enrolledAt: Date;
  id: string;
}

/**
 * Which page: after a key (Next), before a key (Previous), the oldest rows (Last), or after skipping a number of rows
 * (a page asked for by its number: only the keys of the skipped rows are read, through the enrolment index; past the
 * end, the last page). Absent: the first page.
 */
export type RosterPosition = { after: RosterKey } | { before: RosterKey } | { skip: number } | 'last';

export interface RosterFilter {
  /**
   * With a letter: the name starts with it (case-insensitive, through an index). Otherwise the phone number contains
   * its digits (staff search by the last digits).
   */
  search?: string;
  status?: ParticipantStatus;
  /** `INTAKE`, `FEEDBACK`, … (the `conversationState` data key; `NONE` for participants without it). */
  subState?: string;
  /** true: only idle participants; false: only not idle. */
  idle?: boolean;
  /** The participant's channel; the default channel also matches participants whose channel is empty. */
  channel?: { name: string; isDefault: boolean };
  /** A trial's arm in force (`allocations.arm_id`). */
  arm?: string;
  /**
   * Only participants with an adherence alert staff have not resolved (`any` rule, or one of them): the alerts of
   * `ADHERENCE_MISSED_PROMPTS` and `ADHERENCE_SILENT_DAYS` (safety/adherence-alerts.ts).
   */
  adherenceAlert?: AdherenceAlertFilter;
  limit: number;
  position?: RosterPosition;
}

export interface RosterRow {
  participant: Participant;
  conversationState: string | undefined;
  idle: boolean;
  /** The raw `userProfile` data key (JSON), if any. */
  userProfile: string | undefined;
  nextPromptAt: Date | undefined;
  lastMessage: { content: string; kind: TranscriptKind; at: Date } | undefined;
  /** Study days with a daily prompt. */
  promptsSent: number;
  /** Of those, the days the participant wrote back (never more than sent). */
  promptsAnswered: number;
  /** Of those, the days they answered "Done". */
  promptsDone: number;
  /** The newest adherence alert staff have not resolved: its rule, e.g. "3 daily prompts unanswered since …". */
  adherenceAlert: { id: string; rule: string } | undefined;
}

export interface RosterPage {
  rows: RosterRow[];
  /** Participants matching the filter. */
  total: number;
  /** Whether rows exist before the first row (Previous) and after the last (Next). */
  hasNewer: boolean;
  hasOlder: boolean;
}

export interface RosterRepository {
  page(filter: RosterFilter): Promise<RosterPage>;
}

/** One local date of the overview: the study days that fell on it, whatever the participants' zones. */
export interface StudyDayFigures {
  localDate: string;
  promptsSent: number;
  promptsAnswered: number;
  done: number;
  /** From the prompt to the first reply, over the answered days; null when none was answered. */
  medianReplySeconds: number | null;
}

/** One UTC date of LLM use and failed deliveries. */
export interface UsageFigures {
  date: string;
  llmCalls: number;
  llmErrors: number;
  llmTokens: number;
  failedDeliveries: number;
}

export interface ParticipantCounts {
  byStatus: Record<string, number>;
  /** By the `conversationState` data key; `NONE` for participants without one. */
  bySubState: Record<string, number>;
}

export const ADHERENCE_SORTS = ['adherence', 'name', 'enrolled'] as const;
/** Lowest adherence first (participants without a prompt yet last), name A–Z, or newest enrolment first. */
export type AdherenceSort = (typeof ADHERENCE_SORTS)[number];

/** A row's place in the grid's order: the sort column's value (as text) and the participant id. */
export interface AdherenceKey {
  value: string;
  id: string;
}

export interface AdherenceQuery {
  sort: AdherenceSort;
  status?: ParticipantStatus;
  /** The local dates shown (inclusive, `YYYY-MM-DD`). */
  fromDate: string;
  toDate: string;
  limit: number;
  after?: AdherenceKey;
}

export interface AdherenceDay {
  localDate: string;
  promptSentAt: Date;
  answered: boolean;
  done: boolean;
}

export interface AdherenceRow {
  participant: Participant;
  promptsSent: number;
  promptsAnswered: number;
  promptsDone: number;
  /** The study days within the query's dates, oldest first. */
  days: AdherenceDay[];
  /** The spans the participant was not active that overlap the dates (`until` undefined: still). */
  inactive: { status: string; from: Date; until: Date | undefined }[];
}

export interface AdherencePage {
  rows: AdherenceRow[];
  total: number;
  /** The key to ask for the next page with; undefined on the last page. */
  next: AdherenceKey | undefined;
}

export interface StudyDayRepository {
  /** Each local date in [fromDate, toDate] that had study days, oldest first. */
  figuresByDate(fromDate: string, toDate: string): Promise<StudyDayFigures[]>;
  /** Each UTC date in [from, to) with LLM calls or failed deliveries, oldest first. */
  usageByUtcDate(from: Date, to: Date): Promise<UsageFigures[]>;
  participantCounts(): Promise<ParticipantCounts>;
  adherencePage(query: AdherenceQuery): Promise<AdherencePage>;
}

/** The dashboard's read repositories. */
export interface RosterReadRepositories {
  /** The dashboard's roster, overview and adherence grid. */
  readonly roster: RosterRepository;
  readonly studyDays: StudyDayRepository;
}
