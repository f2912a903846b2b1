/** The personas and rubric the repository ships are valid, and cover the cases the README promises. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPersonas, parsePersona } from '../../src/evaluation/persona.ts';
import { loadRubric, parseRubric } from '../../src/research/ratings/rubric.ts';

const EVAL_DIR = join(import.meta.dirname, '..', '..', 'eval');

describe('the shipped evaluation files', () => {
  it('ships 3-5 valid personas, Spanish ones and a risk one among them', () => {
    const personas = loadPersonas(join(EVAL_DIR, 'personas'));
    expect(personas.length).toBeGreaterThanOrEqual(3);
    expect(personas.length).toBeLessThanOrEqual(5);
    expect(personas.filter((persona) => persona.language === 'es').length).toBeGreaterThanOrEqual(2);
    expect(personas.some((persona) => persona.behaviour.riskMessage !== undefined)).toBe(true);
  });

  it('ships a valid default rubric whose thresholds lie on its scale', () => {
    const rubric = loadRubric(join(EVAL_DIR, 'rubric.yaml'));
    expect(rubric.criteria.length).toBeGreaterThanOrEqual(3);
    for (const criterion of rubric.criteria) {
      if (criterion.threshold !== undefined) {
        expect(criterion.threshold).toBeGreaterThanOrEqual(rubric.scale.min);
        expect(criterion.threshold).toBeLessThanOrEqual(rubric.scale.max);
      }
    }
  });

  it('names the file and every field in error for a wrong persona or rubric', () => {
    expect(() => parsePersona('id: x\nname: X\n', 'x.yaml')).toThrow(/x\.yaml: habitGoal: .*motivation/);
    expect(() => parsePersona('id: Bad Id\n', 'b.yaml')).toThrow(/b\.yaml: id: lowercase/);
    expect(() =>
      parsePersona(
        'id: r\nname: R\nhabitGoal: a\nmotivation: b\npreferredTime: "09:00"\nanchor: c\ntimezone: UTC\nbehaviour: { riskDay: 2 }\n',
        'r.yaml',
      ),
    ).toThrow(/riskDay and riskMessage go together/);
    expect(() => parseRubric('name: r\nscale: { min: 3, max: 1 }\ncriteria: []\n', 'rubric.yaml')).toThrow(
      /rubric\.yaml: .*max must be above min/,
    );
  });
});
