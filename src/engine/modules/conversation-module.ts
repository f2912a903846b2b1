/**
 * A module is one conversation behaviour (specification §Modules): a system prompt, a tool set and its context block.
 * The tool loop is shared; modules differ only in what they tell the model and which tools they offer.
 */
import type { ConversationState } from '../../domain/conversation-state.ts';
import type { StateData } from '../../domain/data-keys.ts';
import type { Participant } from '../../domain/participant.ts';
import type { UserProfile } from '../../domain/profile.ts';
import type { LanguagePrompts } from '../system-prompts.ts';

export interface ModuleContextInput {
  participant: Participant;
  profile: UserProfile;
  data: StateData;
  now: Date;
}

export interface ConversationModule {
  readonly state: ConversationState;
  readonly toolNames: readonly string[];
  readonly systemPrompt: string;
  /** Per-language versions of the system prompt (`prompts/es/intake.txt`); others use `systemPrompt`. */
  readonly languagePrompts?: LanguagePrompts;
  /** The module's context blocks, sent as system content after the system prompt. */
  contextBlocks(input: ModuleContextInput): string[];
}

/**
 * Formatters by time zone. Building an `Intl.DateTimeFormat` costs more than the rest of a context block, so each
 * zone's is built once; the number of zones is bounded by the IANA database.
 */
const localTimeFormatters = new Map<string, Intl.DateTimeFormat>();

function localTimeFormatter(timeZone: string): Intl.DateTimeFormat {
  let formatter = localTimeFormatters.get(timeZone);
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      weekday: 'long',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    });
    localTimeFormatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The participant's local time, so the model can reason about "tonight" or "in an hour". */
export function describeNow(participant: Participant, now: Date): string {
  const timeZone = participant.timezone || 'UTC';
  const local = localTimeFormatter(timeZone).format(now);
  return `Current time for the participant: ${local} (${timeZone}${participant.timezone ? '' : ', time zone unknown'}).`;
}

export function backgroundBlock(background: string | undefined): string[] {
  return background ? [`PARTICIPANT BACKGROUND:\n${background}`] : [];
}
