import { describe, expect, it } from 'vitest';
import { createBuiltInMessageCatalogue } from '../../src/i18n/built-in-catalogues.ts';
import { anchorSaysWhen, fallbackPrompt } from '../../src/scheduling/fallback-prompt.ts';

const messages = createBuiltInMessageCatalogue();
const prompt = (anchor: string, language?: string) =>
  fallbackPrompt({ habit_domain: 'walking', prompt_anchor: anchor }, language, messages);

describe('the fallback daily prompt reads well whatever form the anchor takes', () => {
  it('places the step after a cue given as a noun phrase', () => {
    expect(prompt('my morning coffee')).toBe(
      'Time for your walking habit: right after my morning coffee, take one small step today. Even a tiny version counts!',
    );
  });

  it('uses an anchor that already says when as it is, never "after after"', () => {
    expect(prompt('after morning coffee')).toBe(
      'Time for your walking habit: after morning coffee, take one small step today. Even a tiny version counts!',
    );
    expect(prompt('Before bed.')).toBe(
      'Time for your walking habit: before bed, take one small step today. Even a tiny version counts!',
    );
    expect(prompt('when I get home from work')).toContain(': when I get home from work, take one small step');
    expect(prompt('right after lunch')).toContain(': right after lunch, take');
    for (const anchor of ['after coffee', 'Before bed', 'when I get home', 'as soon as I wake up']) {
      expect(prompt(anchor)).not.toMatch(/after (after|before|when|as soon)/i);
    }
  });

  it('does not mistake a cue that merely starts with the same letters for a lead word', () => {
    expect(anchorSaysWhen('afternoon tea', messages.t('en', 'dailyPrompt.anchorLeadWords'))).toBe(false);
    expect(anchorSaysWhen('once I shower', messages.t('en', 'dailyPrompt.anchorLeadWords'))).toBe(true);
    expect(anchorSaysWhen('ontime', messages.t('en', 'dailyPrompt.anchorLeadWords'))).toBe(false);
  });

  it('does the same in Spanish, with or without accents, and never writes "de el"', () => {
    expect(prompt('después del café', 'es')).toBe(
      'Es hora de tu hábito de walking: después del café, da hoy un pequeño paso. ¡Hasta una versión mínima cuenta!',
    );
    expect(prompt('Despues de comer', 'es')).toContain(': despues de comer, da hoy');
    expect(prompt('cuando llego a casa', 'es')).toContain(': cuando llego a casa, da hoy');
    const noun = prompt('el café de la mañana', 'es');
    expect(noun).toContain('el café de la mañana');
    expect(noun).not.toMatch(/después de el|despues de el/);
    expect(noun).not.toMatch(/después de después/);
  });
});
