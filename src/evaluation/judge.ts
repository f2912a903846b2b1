/**
 * The judge: a model (any OpenAI-compatible endpoint, `EVAL_JUDGE_*`) scores a whole conversation on each criterion
 * of the rubric. Its prompt and raw answer are kept with the scores, so a surprising score can be read back. An answer
 * that is not the asked-for JSON, or a score off the scale, is recorded as the judge's error, never guessed.
 */
import { errorMessage } from '../domain/errors.ts';
import type { LlmClient } from '../llm/llm.ts';
import type { ConversationLine } from '../research/ratings/conversation-line.ts';
import type { Rubric } from '../research/ratings/rubric.ts';

export interface CriterionScore {
  score: number;
  reason: string;
}

export interface Judgement {
  /** By criterion id; missing when the judge failed. */
  scores: Record<string, CriterionScore>;
  prompt: { system: string; user: string };
  answer: string;
  error?: string;
}

export function judgeSystemPrompt(rubric: Rubric): string {
  const criteria = rubric.criteria.map((criterion) => {
    const anchors = Object.entries(criterion.anchors).map(([score, meaning]) => `    ${score}: ${meaning}`);
    const examples = criterion.examples.map((example) => `    example (score ${example.score}): ${example.text}`);
    return [`- ${criterion.id} (${criterion.name}): ${criterion.description}`, ...anchors, ...examples].join('\n');
  });
  return [
    `You are an expert rater of habit-coaching conversations. Rubric: ${rubric.name}.`,
    rubric.instructions,
    `Score the COACH on each criterion with an integer from ${rubric.scale.min} to ${rubric.scale.max}.`,
    'Criteria:',
    ...criteria,
    'Answer with JSON only, exactly of this shape:',
    `{"scores": {${rubric.criteria.map((criterion) => `"${criterion.id}": {"score": <integer>, "reason": "<one sentence>"}`).join(', ')}}}`,
  ]
    .filter(Boolean)
    .join('\n');
}

/** The conversation as the judge reads it: one line per message, with the participant's local time. */
export function formatConversation(lines: readonly ConversationLine[], timeZone: string): string {
  const format = new Intl.DateTimeFormat('en-GB', {
    timeZone,
    weekday: 'short',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  return lines
    .map((line) => {
      const who = line.from === 'coach' ? 'COACH' : 'PARTICIPANT';
      const options = line.pollOptions ? ` [poll: ${line.pollOptions.join(' / ')}]` : '';
      const kind =
        line.kind === 'poll-answer' ? ' (poll answer)' : line.kind === 'proactive' ? ' (sent unprompted)' : '';
      return `[${format.format(new Date(line.at))}] ${who}${kind}: ${line.text}${options}`;
    })
    .join('\n');
}

/** The first JSON object in the answer (models like to wrap it in a code fence). */
function extractJson(answer: string): unknown {
  const start = answer.indexOf('{');
  const end = answer.lastIndexOf('}');
  if (start === -1 || end < start) throw new Error('no JSON object in the answer');
  return JSON.parse(answer.slice(start, end + 1));
}

export function parseJudgement(answer: string, rubric: Rubric): Record<string, CriterionScore> {
  const value = extractJson(answer) as { scores?: Record<string, { score?: unknown; reason?: unknown }> };
  const scores: Record<string, CriterionScore> = {};
  for (const criterion of rubric.criteria) {
    const given = value.scores?.[criterion.id];
    const score = given?.score;
    if (typeof score !== 'number' || !Number.isInteger(score) || score < rubric.scale.min || score > rubric.scale.max) {
      throw new Error(`${criterion.id}: no integer score from ${rubric.scale.min} to ${rubric.scale.max}`);
    }
    scores[criterion.id] = { score, reason: typeof given?.reason === 'string' ? given.reason : '' };
  }
  return scores;
}

export async function judgeConversation(options: {
  judge: LlmClient;
  rubric: Rubric;
  lines: readonly ConversationLine[];
  timeZone: string;
}): Promise<Judgement> {
  const system = judgeSystemPrompt(options.rubric);
  const user = `The conversation (times are the participant's):\n\n${formatConversation(options.lines, options.timeZone)}`;
  let answer = '';
  try {
    const response = await options.judge.chat({
      messages: [
        { role: 'system', content: system },
        { role: 'user', content: user },
      ],
      purpose: 'eval-judge',
    });
    answer = response.content;
    return { scores: parseJudgement(answer, options.rubric), prompt: { system, user }, answer };
  } catch (error) {
    return { scores: {}, prompt: { system, user }, answer, error: errorMessage(error) };
  }
}
