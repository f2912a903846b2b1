import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FEEDBACK_TOOLS } from '../../src/engine/modules/feedback-module.ts';
import { INTAKE_TOOLS } from '../../src/engine/modules/intake-module.ts';
import { loadSystemPrompts } from '../../src/engine/system-prompts.ts';

const ALL_TOOLS = ['save_user_profile', 'scheduler', 'generate_habit_prompt', 'transition_state'];

function toolsNamedIn(text: string): string[] {
  return ALL_TOOLS.filter((tool) => new RegExp(`\\b${tool}\\b`).test(text));
}

describe('system prompts (specification §Modules: a prompt promises only the tools it has)', () => {
  const prompts = loadSystemPrompts({});

  it('the intake prompt names exactly the intake tools', () => {
    expect(toolsNamedIn(prompts.intake).sort()).toEqual([...INTAKE_TOOLS].sort());
  });

  it('the feedback prompt names only feedback tools', () => {
    expect(toolsNamedIn(prompts.feedback).sort()).toEqual([...FEEDBACK_TOOLS].sort());
    expect(prompts.feedback).not.toMatch(/generate_habit_prompt/);
  });

  it('the prompt generator promises no tools', () => {
    expect(toolsNamedIn(prompts.promptGenerator)).toEqual([]);
  });

  it('tells the model never to show schedule ids', () => {
    expect(prompts.intake).toMatch(/never show them/i);
    expect(prompts.feedback).toMatch(/never show them/i);
  });

  it('loads override files and rejects missing or empty ones', () => {
    const directory = mkdtempSync(join(tmpdir(), 'pp-prompts-'));
    const custom = join(directory, 'intake.txt');
    writeFileSync(custom, 'Custom intake prompt');
    expect(loadSystemPrompts({ intakeFile: custom }).intake).toBe('Custom intake prompt');
    expect(() => loadSystemPrompts({ feedbackFile: join(directory, 'missing.txt') })).toThrow(
      /FEEDBACK_TRACKER_PROMPT_FILE/,
    );
    const empty = join(directory, 'empty.txt');
    writeFileSync(empty, '  ');
    expect(() => loadSystemPrompts({ promptGeneratorFile: empty })).toThrow(/empty/);
  });
});
