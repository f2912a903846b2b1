/**
 * The scripted world of the `promptpipe eval` tests: one scripted OpenAI-compatible server plays the coach (the study
 * coach script, by system prompt) AND the judge (a fixed score per criterion, lower for the variant coach), and three
 * scripted personas (English, Spanish with late answers and misses, and a risk persona who later opts out).
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliIo } from '../../src/cli/cli.ts';
import { runEvalCommand } from '../../src/cli/eval-command.ts';
import type { ScriptedChatRequest, ScriptedReply } from '../support/scripted-openai-server.ts';
import { createStudyCoach, SAID } from '../support/study-coach-script.ts';

/** A prompt file containing this makes the scripted coach end the intake without the scheduler (a broken prompt). */
export const BROKEN_MARKER = 'EVAL-TEST: forget the schedule';
/** A prompt file containing this makes the scripted coach greet differently, and the judge score it one lower. */
export const VARIANT_MARKER = 'EVAL-TEST: variant greeting';
export const VARIANT_GREETING = 'Hello there! What habit shall we start with?';
export const JUDGE_SCORE = 4;

const CRITERIA = ['empathy', 'clarity', 'personalisation'];

export function evalResponder(unexpected: string[]) {
  const coach = createStudyCoach(unexpected);
  return (request: ScriptedChatRequest): ScriptedReply => {
    const system = request.body.messages[0]?.content ?? '';
    if (system.startsWith('You are an expert rater')) {
      const conversation = request.lastMessage?.content ?? '';
      const score = conversation.includes(VARIANT_GREETING) ? JUDGE_SCORE - 1 : JUDGE_SCORE;
      const scores = Object.fromEntries(CRITERIA.map((id) => [id, { score, reason: `scripted ${score}` }]));
      return { content: `\`\`\`json\n${JSON.stringify({ scores })}\n\`\`\`` };
    }
    const said = [...request.body.messages].reverse().find((message) => message.role === 'user')?.content ?? '';
    if (system.includes(VARIANT_MARKER) && said.includes('expecting a greeting')) return { content: VARIANT_GREETING };
    if (system.includes(BROKEN_MARKER) && said === SAID.timing) return { content: 'Great, talk soon!' };
    if (system.includes('(FEEDBACK)') && !said.startsWith('Q: ')) return { content: 'Thanks for telling me.' };
    return coach(request);
  };
}

const PERSONAS: Record<string, string> = {
  'ada.yaml': `id: ada
name: Ada
habitGoal: walk more
motivation: energy
preferredTime: "09:00"
anchor: after breakfast
timezone: America/New_York
seed: 7
script:
  intake: ["${SAID.habit}", "${SAID.timing}"]
`,
  'lucia.yaml': `id: lucia
name: Lucía
habitGoal: caminar más
motivation: tener energía
preferredTime: "09:00"
anchor: después del desayuno
timezone: Europe/Madrid
language: es
behaviour: { answerRate: 0.7, lateRate: 0.5, doneRate: 0.6, offTopicRate: 0.3 }
seed: 3
script:
  intake: ["${SAID.habit}", "${SAID.timing}"]
  replies: ["Gracias"]
  offTopic: ["¿Qué tiempo hará mañana?"]
`,
  'risk.yaml': `id: risk
name: Sam
habitGoal: sleep earlier
motivation: feel less tired
preferredTime: "09:00"
anchor: after breakfast
timezone: Asia/Tokyo
behaviour: { riskDay: 3, riskMessage: "Honestly some days I just want to die", optOutDay: 5 }
seed: 11
script:
  intake: ["${SAID.habit}", "${SAID.timing}"]
`,
};

export const RUBRIC = `name: test rubric
scale: { min: 1, max: 5 }
criteria:
  - { id: empathy, name: Empathy, description: warm and respectful, threshold: 3.5 }
  - { id: clarity, name: Clarity, description: clear and short }
  - { id: personalisation, name: Personalisation, description: uses what the participant said }
`;

/** A fresh directory with personas/, rubric.yaml, and prompt directories good/, broken/ and variant/. */
export function evalWorkspace(): {
  root: string;
  personas: string;
  rubric: string;
  prompts: (kind: 'good' | 'broken' | 'variant') => string;
} {
  const root = mkdtempSync(join(tmpdir(), 'promptpipe-eval-'));
  mkdirSync(join(root, 'personas'));
  for (const [name, text] of Object.entries(PERSONAS)) writeFileSync(join(root, 'personas', name), text);
  writeFileSync(join(root, 'rubric.yaml'), RUBRIC);
  for (const kind of ['good', 'broken', 'variant'] as const) {
    const directory = join(root, 'prompts', kind);
    cpSync(join(import.meta.dirname, '..', '..', 'prompts'), directory, { recursive: true });
    const marker = kind === 'broken' ? BROKEN_MARKER : kind === 'variant' ? VARIANT_MARKER : '';
    if (marker) writeFileSync(join(directory, 'intake.txt'), `${marker}\n\n(INTAKE)\nYou are the intake coach.`);
  }
  return {
    root,
    personas: join(root, 'personas'),
    rubric: join(root, 'rubric.yaml'),
    prompts: (kind) => join(root, 'prompts', kind),
  };
}

/**
 * Runs `promptpipe eval` on the workspace (one day, one repeat, the good prompts, compared with `comparePromptsDir`
 * when given) against the scripted model, its output discarded; returns the run's id from `out`/report.json.
 */
export async function runWorkspaceEval(
  workspace: ReturnType<typeof evalWorkspace>,
  model: { baseUrl: string },
  out: string,
  options: { comparePromptsDir?: string } = {},
): Promise<string> {
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  const io: CliIo = { stdin: process.stdin, stdout: sink, stderr: sink, onSignal: () => {}, exit: () => {} };
  await runEvalCommand(
    {
      personas: workspace.personas,
      rubric: workspace.rubric,
      days: 1,
      repeat: 1,
      concurrency: 3,
      out,
      promptsDir: workspace.prompts('good'),
      ...(options.comparePromptsDir ? { comparePromptsDir: options.comparePromptsDir } : {}),
      intakeTurnLimit: 6,
    },
    io,
    { OPENAI_BASE_URL: model.baseUrl, EVAL_JUDGE_BASE_URL: model.baseUrl },
  );
  return (JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as { run: { id: string } }).run.id;
}
