import { ConversationState } from '../../domain/conversation-state.ts';
import { DataKey } from '../../domain/data-keys.ts';
import type { UserProfile } from '../../domain/profile.ts';
import type { LanguagePrompts } from '../system-prompts.ts';
import { backgroundBlock, type ConversationModule, describeNow } from './conversation-module.ts';

export const INTAKE_TOOLS = ['save_user_profile', 'scheduler', 'generate_habit_prompt', 'transition_state'] as const;

const INTAKE_FIELDS = ['habit_domain', 'motivational_frame', 'preferred_time', 'prompt_anchor'] as const;

/** Which profile fields are present and which are still needed (specification §Modules). */
export function describeIntakeStatus(profile: UserProfile): string {
  const present = INTAKE_FIELDS.filter((field) => profile[field].trim());
  const missing = INTAKE_FIELDS.filter((field) => !profile[field].trim());
  const lines = ['INTAKE STATUS:'];
  lines.push(
    present.length > 0
      ? `Already saved:\n${present.map((field) => `- ${field}: ${profile[field]}`).join('\n')}`
      : 'Nothing saved yet.',
  );
  if (profile.additional_info) lines.push(`- additional_info: ${profile.additional_info}`);
  lines.push(missing.length > 0 ? `Still needed: ${missing.join(', ')}.` : 'Still needed: nothing.');
  if (!profile.prompt_anchor || !profile.preferred_time) {
    lines.push('A habit prompt can only be generated once prompt_anchor and preferred_time are saved.');
  } else if (missing.length === 0) {
    lines.push(
      'The profile is complete: generate the first habit prompt, create the daily schedule, then move to FEEDBACK.',
    );
  }
  return lines.join('\n');
}

export function createIntakeModule(systemPrompt: string, languagePrompts?: LanguagePrompts): ConversationModule {
  return {
    state: ConversationState.INTAKE,
    toolNames: INTAKE_TOOLS,
    systemPrompt,
    ...(languagePrompts ? { languagePrompts } : {}),
    contextBlocks: ({ participant, profile, data, now }) => [
      `${describeIntakeStatus(profile)}\n${describeNow(participant, now)}`,
      ...backgroundBlock(data[DataKey.participantBackground]),
    ],
  };
}
