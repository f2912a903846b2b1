import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadLanguageSystemPrompts, systemPromptFor } from '../../src/engine/system-prompts.ts';

let directory: string;
afterEach(() => rmSync(directory, { recursive: true, force: true }));

function study(files: Record<string, string>): string {
  directory = mkdtempSync(join(tmpdir(), 'promptpipe-prompts-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(directory, path, '..'), { recursive: true });
    writeFileSync(join(directory, path), text);
  }
  return directory;
}

describe('per-language prompt files', () => {
  it('finds <dir>/<tag>/<name> beside each effective prompt file, by canonical tag', () => {
    const root = study({
      'intake.txt': 'default intake',
      'es/intake.txt': 'intake en español',
      'PT-br/intake.txt': 'intake em português',
      'archive/intake.txt': 'not a language folder',
      'es/feedback.txt': 'feedback en español',
    });
    const prompts = loadLanguageSystemPrompts({
      intakeFile: join(root, 'intake.txt'),
      feedbackFile: join(root, 'feedback.txt'),
    });
    expect([...prompts.intake.keys()].sort()).toEqual(['es', 'pt-BR']);
    expect(prompts.intake.get('es')).toEqual({ text: 'intake en español', file: join(root, 'es', 'intake.txt') });
    expect(prompts.feedback.get('es')?.text).toBe('feedback en español');
    // The built-in prompt generator ships without translations.
    expect(prompts.promptGenerator.size).toBe(0);
  });

  it('chooses the most specific file, else the default text', () => {
    const root = study({ 'intake.txt': 'default', 'es/intake.txt': 'español', 'es-MX/intake.txt': 'mexicano' });
    const { intake } = loadLanguageSystemPrompts({ intakeFile: join(root, 'intake.txt') });
    expect(systemPromptFor('default', intake, 'es-MX')).toBe('mexicano');
    expect(systemPromptFor('default', intake, 'es-AR')).toBe('español');
    expect(systemPromptFor('default', intake, 'fr')).toBe('default');
    expect(systemPromptFor('default', undefined, 'es')).toBe('default');
  });

  it('refuses an empty per-language file at start-up', () => {
    const root = study({ 'intake.txt': 'default', 'es/intake.txt': '  \n' });
    expect(() => loadLanguageSystemPrompts({ intakeFile: join(root, 'intake.txt') })).toThrow(
      /INTAKE_BOT_PROMPT_FILE \(es\): prompt file .* is empty/,
    );
  });
});
