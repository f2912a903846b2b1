import { describe, expect, it } from 'vitest';
import { createKeywordDetector, DEFAULT_RISK_KEYWORDS, normalizeForMatching } from '../../src/safety/risk-keywords.ts';
import { parseVerdict } from '../../src/safety/risk-model-check.ts';

const detector = createKeywordDetector(DEFAULT_RISK_KEYWORDS);

describe('the keyword detector', () => {
  it('ignores case, accents and punctuation, and matches whole words', () => {
    expect(normalizeForMatching("I DON'T want to live…")).toBe('i dont want to live');
    expect(detector.match("I don't want to live anymore")?.rule).toBe('dont want to live');
    expect(detector.match('Quiero hacerme DAÑO')?.rule).toBe('hacerme dano');
    expect(detector.match('me quiero morir!!')).toEqual({ language: 'es', rule: 'quiero morir' });
    expect(detector.match('feeling suicidal today')?.rule).toBe('suicid*');
    // Inside another word is no match: "overdosed" is, "killing myself" is; "skill myself up" is not.
    expect(detector.match('I will skill myself up')).toBeUndefined();
    expect(detector.match('I want to diet')).toBeUndefined();
    expect(detector.match('I walked 20 minutes')).toBeUndefined();
  });

  it('takes a study’s own phrases and refuses a phrase without letters', () => {
    const custom = createKeywordDetector({ fr: ['me faire du mal'] });
    expect(custom.match('Je veux me faire du mal')).toEqual({ language: 'fr', rule: 'me faire du mal' });
    expect(custom.match('kill myself')).toBeUndefined();
    expect(() => createKeywordDetector({ en: ['  !! '] })).toThrow(/no letters/);
  });
});

describe('the model verdict', () => {
  it('reads the JSON in the answer and applies the threshold', () => {
    expect(parseVerdict('```json\n{"risk": false, "score": 0.7, "category": "self-harm"}\n```', 0.5)).toEqual({
      flagged: true,
      score: 0.7,
      category: 'self-harm',
    });
    expect(parseVerdict('{"risk": true}', 0.5)).toEqual({ flagged: true, score: 1, category: 'unspecified' });
    expect(parseVerdict('{"risk": false, "score": 0.2}', 0.5)?.flagged).toBe(false);
    expect(parseVerdict('no idea', 0.5)).toBeUndefined();
  });
});
