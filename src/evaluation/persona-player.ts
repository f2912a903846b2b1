/**
 * Who writes the persona's messages: fixed replies from the persona's `script`, or a model playing the persona from
 * its description (any OpenAI-compatible endpoint, `EVAL_PERSONA_*`). The simulation decides WHEN and WHETHER the
 * persona writes (its behaviour and seed); the player only decides WHAT.
 */
import { AppError } from '../domain/errors.ts';
import type { ChatMessage, LlmClient } from '../llm/llm.ts';
import type { Persona } from './persona.ts';

/** What the persona is asked to write. */
export type ReplyPurpose = 'intake' | 'answer' | 'off-topic';

/** One line of the conversation as the persona saw it. */
export interface SeenMessage {
  from: 'coach' | 'persona';
  text: string;
}

export interface PersonaPlayer {
  /** The persona's next message, or undefined when a script has nothing more to say. */
  write(purpose: ReplyPurpose, conversation: readonly SeenMessage[]): Promise<string | undefined>;
}

export function createScriptedPlayer(script: NonNullable<Persona['script']>): PersonaPlayer {
  const used: Record<ReplyPurpose, number> = { intake: 0, answer: 0, 'off-topic': 0 };
  return {
    async write(purpose) {
      const index = used[purpose];
      used[purpose] += 1;
      if (purpose === 'intake') return script.intake[index];
      const lines = purpose === 'answer' ? script.replies : script.offTopic;
      return lines[index % lines.length];
    },
  };
}

function personaSystemPrompt(persona: Persona): string {
  const { style } = persona;
  return [
    `You are role-playing ${persona.name}, a participant in a habit-coaching study who chats with a coach on their`,
    'phone. Stay in character; never say you are an AI. Reply with the message text only.',
    `Who you are: ${persona.description || 'an ordinary adult'}. You want to build this habit: ${persona.habitGoal}.`,
    `Why: ${persona.motivation}. It would fit ${persona.anchor}, around ${persona.preferredTime} your time.`,
    `Write in the language "${persona.language}". Message length: ${style.length}.`,
    style.emojis ? 'You like emojis.' : 'You never use emojis.',
    style.spelling === 'sloppy' ? 'You type fast: typos, no capitals.' : 'You spell carefully.',
    style.hostility === 'none' ? '' : `You are ${style.hostility === 'strong' ? 'openly hostile' : 'a bit irritable'}.`,
  ]
    .filter(Boolean)
    .join(' ');
}

const PURPOSE_HINTS: Record<ReplyPurpose, string> = {
  intake: 'Answer the coach so it can set up your habit plan.',
  answer: "Reply to the coach's last message.",
  'off-topic': 'Ask the coach something unrelated to the habit (anything you happen to wonder about).',
};

export function createModelPlayer(persona: Persona, llm: LlmClient): PersonaPlayer {
  return {
    async write(purpose, conversation) {
      // The coach speaks as "user" so the persona model answers as "assistant"; the hint is the last user turn.
      const messages: ChatMessage[] = [{ role: 'system', content: personaSystemPrompt(persona) }];
      for (const line of conversation) {
        messages.push(
          line.from === 'coach' ? { role: 'user', content: line.text } : { role: 'assistant', content: line.text },
        );
      }
      messages.push({ role: 'user', content: `(${PURPOSE_HINTS[purpose]})` });
      const response = await llm.chat({ messages, purpose: 'eval-persona' });
      const text = response.content.trim();
      return text === '' ? undefined : text;
    },
  };
}

/** The persona's script when it has one, else the persona model; neither is a clear error. */
export function playerFor(persona: Persona, personaModel: LlmClient | undefined): PersonaPlayer {
  if (persona.script) return createScriptedPlayer(persona.script);
  if (!personaModel) {
    throw new AppError(
      'invalid_input',
      `persona ${persona.id} has no script, so it needs a model: set EVAL_PERSONA_BASE_URL (and EVAL_PERSONA_MODEL)`,
    );
  }
  return createModelPlayer(persona, personaModel);
}

/** A small seeded generator (mulberry32): the same seed plays the same days. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}
