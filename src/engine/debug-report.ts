/** Debug mode (`PROMPTPIPE_DEBUG`): developer-facing messages prefixed `🐛 DEBUG:` (specification, scenario 9). */
import type { ConversationState } from '../domain/conversation-state.ts';
import type { UserProfile } from '../domain/profile.ts';
import type { ToolLoopResult } from './tool-loop.ts';

export const DEBUG_PREFIX = '🐛 DEBUG:';

export function debugMessages(input: {
  module: ConversationState;
  profile: UserProfile;
  loop: ToolLoopResult;
}): string[] {
  const { module, profile, loop } = input;
  const profileSummary = [
    `domain=${profile.habit_domain || '-'}`,
    `time=${profile.preferred_time || '-'}`,
    `anchor=${profile.prompt_anchor || '-'}`,
    `intensity=${profile.intensity}`,
    `successes=${profile.success_count}/${profile.total_prompts}`,
  ].join(', ');
  const tools =
    loop.toolCalls.length > 0 ? loop.toolCalls.map((call) => `${call.name}(${call.status})`).join(', ') : 'none';
  const messages = [
    `${DEBUG_PREFIX} state=${module} | profile: ${profileSummary} | tools: ${tools} | rounds=${loop.rounds} outcome=${loop.outcome}`,
  ];
  if (loop.reasoning.length > 0) messages.push(`${DEBUG_PREFIX} reasoning: ${loop.reasoning.join('\n---\n')}`);
  if (loop.error) messages.push(`${DEBUG_PREFIX} error: ${loop.error}`);
  return messages;
}
