/**
 * The three system prompts. Built-in defaults live in `prompts/`; `INTAKE_BOT_PROMPT_FILE`,
 * `FEEDBACK_TRACKER_PROMPT_FILE` and `PROMPT_GENERATOR_PROMPT_FILE` override them. Read once at start-up: a missing
 * or empty override file is a start-up error, not a silent fallback.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '../domain/errors.ts';

export interface SystemPrompts {
  intake: string;
  feedback: string;
  promptGenerator: string;
}

export const BUILT_IN_PROMPTS_DIRECTORY = join(import.meta.dirname, '..', '..', 'prompts');

function readPrompt(path: string, setting: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (error) {
    throw new AppError('invalid_input', `${setting}: cannot read prompt file "${path}"`, { cause: error });
  }
  if (!text) throw new AppError('invalid_input', `${setting}: prompt file "${path}" is empty`);
  return text;
}

export function loadSystemPrompts(overrides: {
  intakeFile?: string | undefined;
  feedbackFile?: string | undefined;
  promptGeneratorFile?: string | undefined;
}): SystemPrompts {
  const builtIn = (name: string) => join(BUILT_IN_PROMPTS_DIRECTORY, name);
  return {
    intake: readPrompt(overrides.intakeFile ?? builtIn('intake.txt'), 'INTAKE_BOT_PROMPT_FILE'),
    feedback: readPrompt(overrides.feedbackFile ?? builtIn('feedback.txt'), 'FEEDBACK_TRACKER_PROMPT_FILE'),
    promptGenerator: readPrompt(
      overrides.promptGeneratorFile ?? builtIn('prompt-generator.txt'),
      'PROMPT_GENERATOR_PROMPT_FILE',
    ),
  };
}
