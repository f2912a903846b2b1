/**
 * The study design file: the README's example loads, YAML and JSON of one design have one hash, and every kind of
 * mistake is an error naming the file, the line and the field.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseStudyDesign } from '../../src/trials/study-design-file.ts';
import { readmeExampleDesign } from '../support/readme-study-design.ts';

function problemOf(text: string): string {
  try {
    parseStudyDesign(text, 'design.yaml');
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the design was accepted');
}

describe('the study design file', () => {
  it("loads the README's example, defaults filled in", () => {
    const { design, hash } = parseStudyDesign(readmeExampleDesign(), 'README.md');
    expect(design.study.id).toBe('habits-rct-2027');
    expect(design.arms.map((arm) => [arm.id, arm.weight, arm.daily_prompt.mode])).toEqual([
      ['coach', 2, 'personalised'],
      ['static', 1, 'static'],
      ['assessment', 1, 'none'],
    ]);
    expect(design.allocation).toMatchObject({ method: 'stratified_blocks', strata: ['language', 'import.site'] });
    expect(design.arms[0]?.features.reminders).toBe(true);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('gives the same hash to the same design written as JSON, in another key order', () => {
    const yaml = parseStudyDesign(
      'study: { id: s1, seed: "0123456789" }\narms:\n  - { id: a, label: A }\n  - { id: b, label: B }\n',
      'a.yaml',
    );
    const json = parseStudyDesign(
      JSON.stringify({
        arms: [
          { label: 'A', id: 'a' },
          { id: 'b', label: 'B', weight: 1 },
        ],
        study: { seed: '0123456789', id: 's1' },
      }),
      'a.json',
    );
    expect(json.hash).toBe(yaml.hash);
    const other = parseStudyDesign(
      'study: { id: s1, seed: "0123456789" }\narms:\n  - { id: a, label: A, weight: 2 }\n  - { id: b, label: B }\n',
      'b.yaml',
    );
    expect(other.hash).not.toBe(yaml.hash);
  });

  it('names the line and the field of a wrong value', () => {
    const text = [
      'study:',
      '  id: s1',
      '  seed: "0123456789"',
      'arms:',
      '  - id: a',
      '    label: A',
      '  - id: b',
      '    label: B',
      '    weight: -1',
    ].join('\n');
    expect(problemOf(text)).toMatch(/design\.yaml line 9 \(arms\.1\.weight\): must be positive/);
  });

  it('names a misspelt key, a missing field at its parent, a duplicate arm and a bad block size', () => {
    const shape = ['study:', '  id: s1', 'arms:', '  - { id: a, label: A, wieght: 2 }'].join('\n');
    expect(problemOf(shape)).toMatch(/line 2 \(study\.seed\): is required/);
    expect(problemOf(shape)).toMatch(/line 4 \(arms\.0\): Unrecognized key: "wieght"/i);
    const rules = [
      'study: { id: s1, seed: "0123456789" }',
      'arms:',
      '  - { id: a, label: A }',
      '  - { id: a, label: B }',
      'allocation: { method: permuted_blocks, block_sizes: [3] }',
    ].join('\n');
    expect(problemOf(rules)).toMatch(/line 4 \(arms\.1\.id\): duplicate arm id "a"/);
    expect(problemOf(rules)).toMatch(/line 5 \(allocation\.block_sizes\.0\): block size 3 is not a multiple/);
  });

  it('names the line of a syntax error, in YAML and in JSON', () => {
    expect(problemOf('study:\n  id: s1\n  seed: [unclosed\n')).toMatch(/design\.yaml line \d+:/);
    expect(problemOf('{"study": {"id": "s1",\n "seed": }')).toMatch(/design\.yaml line 2:/);
  });

  it('refuses probabilities that do not add up to 1 or miss an option', () => {
    const text = `study: { id: s1, seed: "0123456789" }
arms: [{ id: a, label: A }]
decision_points:
  - id: nudge
    moment: { type: daily_prompt }
    options: [send, skip]
    probabilities:
      default: { send: 0.5, skip: 0.4 }
      by_arm: { a: { send: 1 } }
`;
    const problem = problemOf(text);
    expect(problem).toMatch(/line 8 \(decision_points\.0\.probabilities\.default\): probabilities must add up to 1/);
    expect(problem).toMatch(/line 9 \(decision_points\.0\.probabilities\.by_arm\.a\): must give a probability/);
  });
});

describe('per-arm prompts, tone and the daily prompt time', () => {
  it("reads an arm's prompt directory relative to the design file, with its language versions", async () => {
    const directory = await mkdtemp(join(tmpdir(), 'arm-prompts-'));
    await mkdir(join(directory, 'brief', 'es'), { recursive: true });
    await writeFile(join(directory, 'brief', 'intake.txt'), 'Brief intake.');
    await writeFile(join(directory, 'brief', 'es', 'intake.txt'), 'Intake breve.');
    const study = parseStudyDesign(
      `study: { id: s1, seed: "0123456789" }
arms:
  - { id: a, label: A }
  - { id: b, label: B, prompt_dir: brief, features: { tone_adaptation: false } }
decision_points:
  - id: at-prompt
    moment: { type: daily_prompt }
    options: [send, skip]
    probabilities: { default: { send: 0.5, skip: 0.5 } }
`,
      'design.yaml',
      directory,
    );
    const brief = study.armPrompts?.get('b');
    expect(brief?.intake?.text).toBe('Brief intake.');
    expect(brief?.intake?.languagePrompts.get('es')?.text).toBe('Intake breve.');
    expect(brief?.feedback).toBeUndefined();
    expect(study.armPrompts?.has('a')).toBe(false);
    expect(study.design.arms[1]?.features.tone_adaptation).toBe(false);
    expect(study.design.arms[0]?.features.tone_adaptation).toBe(true);
  });

  it('refuses a prompt directory that is missing, empty of prompts or holds an empty prompt, naming the line', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'arm-prompts-'));
    await mkdir(join(directory, 'nothing'));
    await mkdir(join(directory, 'blank'));
    await writeFile(join(directory, 'blank', 'feedback.txt'), '  \n');
    const designWith = (dir: string) => `study: { id: s1, seed: "0123456789" }
arms:
  - { id: a, label: A }
  - id: b
    label: B
    prompt_dir: ${dir}
`;
    const problemIn = (text: string) => {
      try {
        parseStudyDesign(text, 'design.yaml', directory);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('the design was accepted');
    };
    expect(problemIn(designWith('absent'))).toMatch(/design\.yaml line 6 \(arms\.1\.prompt_dir\): .*holds none of/);
    expect(problemIn(designWith('nothing'))).toMatch(/line 6 \(arms\.1\.prompt_dir\): .*holds none of intake\.txt/);
    expect(problemIn(designWith('blank'))).toMatch(
      /line 6 \(arms\.1\.prompt_dir\): prompt file .*feedback\.txt" is empty/,
    );
  });

  it('refuses a misspelt feature and a done poll outside an assessment-only arm', () => {
    expect(
      problemOf(`study: { id: s1, seed: "0123456789" }
arms: [{ id: a, label: A, features: { tone_adaption: false } }]
`),
    ).toMatch(/arms\.0\.features\): Unrecognized key: "tone_adaption"/i);
    expect(
      problemOf(`study: { id: s1, seed: "0123456789" }
arms: [{ id: a, label: A, daily_prompt: { mode: personalised, done_poll: true } }]
`),
    ).toMatch(/arms\.0\.daily_prompt\): Unrecognized key: "done_poll"/i);
  });
});
