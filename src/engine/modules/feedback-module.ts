import { ConversationState } from '../../domain/conversation-state.ts';
import { DataKey, type StateData } from '../../domain/data-keys.ts';
import type { UserProfile } from '../../domain/profile.ts';
import type { LanguagePrompts } from '../system-prompts.ts';
import { backgroundBlock, type ConversationModule, describeNow } from './conversation-module.ts';

export const FEEDBACK_TOOLS = ['transition_state', 'save_user_profile', 'scheduler'] as const;

/** Domain, motivation, prompts sent, successes and the last prompt (specification §Modules). */
export function describeFeedbackContext(profile: UserProfile, data: StateData): string {
  const lines = [
    'FEEDBACK CONTEXT:',
    `- Habit domain: ${profile.habit_domain || '(not set)'}`,
    `- Motivation: ${profile.motivational_frame || '(not set)'}`,
    `- Preferred time: ${profile.preferred_time || '(not set)'}; anchor: ${profile.prompt_anchor || '(not set)'}`,
    `- Intensity: ${profile.intensity}`,
    `- Prompts sent: ${profile.total_prompts}; successes: ${profile.success_count}`,
    `- Last prompt sent: ${data[DataKey.lastHabitPrompt] || '(none yet)'}`,
  ];
  if (profile.last_barrier) lines.push(`- Last barrier: ${profile.last_barrier}`);
  if (profile.last_tweak) lines.push(`- Last tweak: ${profile.last_tweak}`);
  if (profile.last_motivator) lines.push(`- Last motivator: ${profile.last_motivator}`);
  if (!profile.prompt_anchor || !profile.preferred_time) {
    lines.push('The profile is missing prompt_anchor or preferred_time: consider moving back to INTAKE to repair it.');
  }
  return lines.join('\n');
}

export function createFeedbackModule(systemPrompt: string, languagePrompts?: LanguagePrompts): ConversationModule {
  return {
    state: ConversationState.FEEDBACK,
    toolNames: FEEDBACK_TOOLS,
    systemPrompt,
    ...(languagePrompts ? { languagePrompts } : {}),
    contextBlocks: ({ participant, profile, data, now }) => [
      `${describeFeedbackContext(profile, data)}\n${describeNow(participant, now)}`,
      ...backgroundBlock(data[DataKey.participantBackground]),
    ],
  };
}
