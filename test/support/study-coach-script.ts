/**
 * A scripted coach for the browser and end-to-end tests: the reply is a function of the request (which module asks, what the
 * participant said, which tool results came back this turn). Anything unexpected is recorded in `unexpected` and
 * answered with a marker, so a product change fails an assertion instead of hanging.
 */
import type { OpenAiRequestMessage, ScriptedChatRequest, ScriptedReply } from './scripted-openai-server.ts';

export const SAID = {
  habit: 'I want to walk more, it gives me energy',
  timing: 'Around 9, right after breakfast',
} as const;

export const COACH = {
  greeting: 'Hi Ada! Which habit would you like to build?',
  askTiming: 'Walking for energy, love it. When in your day could a short walk fit?',
  firstPrompt: 'After breakfast, step outside and walk to the end of the street and back.',
  dailyPrompt: 'After breakfast today, put your shoes on and walk for five minutes.',
  feedback: 'Wonderful, well done! How did the walk feel?',
  allSet: 'All set: from tomorrow your prompt comes every morning before 9.',
} as const;

const COMPLETE_INTAKE = [
  { name: 'save_user_profile', arguments: { preferred_time: '09:00', prompt_anchor: 'after breakfast' } },
  { name: 'generate_habit_prompt', arguments: { delivery_mode: 'immediate' } },
  { name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '09:00' } },
  { name: 'transition_state', arguments: { target_state: 'FEEDBACK', reason: 'intake complete' } },
];

function currentTurn(messages: readonly OpenAiRequestMessage[]): { said: string; results: number } {
  const userIndex = messages.findLastIndex((message) => message.role === 'user');
  const results = messages.slice(userIndex + 1).filter((message) => message.role === 'tool').length;
  return { said: messages[userIndex]?.content ?? '', results };
}

export function createStudyCoach(unexpected: string[]) {
  const surprise = (what: string): ScriptedReply => {
    unexpected.push(what);
    return { content: `SCRIPT SURPRISE: ${what}` };
  };
  return (request: ScriptedChatRequest): ScriptedReply => {
    const system = request.body.messages[0]?.content ?? '';
    const { said, results } = currentTurn(request.body.messages);
    if (system.startsWith('You write one short daily habit prompt')) {
      if (said.includes('first habit prompt')) return { content: COACH.firstPrompt };
      if (said.includes('daily habit prompt')) return { content: COACH.dailyPrompt };
      return surprise(`prompt-generator asked: ${said}`);
    }
    if (system.includes('(INTAKE)')) {
      if (said.includes('expecting a greeting')) return { content: COACH.greeting };
      if (said === SAID.habit) {
        return results === 0
          ? { toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'walking' } }] }
          : { content: COACH.askTiming };
      }
      if (said === SAID.timing) {
        const next = COMPLETE_INTAKE[results];
        return next ? { toolCalls: [next] } : { content: COACH.allSet };
      }
      return surprise(`intake heard: ${said}`);
    }
    if (system.includes('(FEEDBACK)')) {
      if (said === 'Q: Did you do it? A: Done') return { content: COACH.feedback };
      return { content: `Noted: ${said}` };
    }
    return surprise(`unknown module: ${system.slice(0, 80)}`);
  };
}
