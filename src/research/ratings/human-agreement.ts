/**
 * Judge–human agreement of one evaluation run: which human ratings count (whole-conversation scores of this run's
 * conversations, a rater's latest score of a conversation on a criterion replacing their earlier ones) and the
 * quadratic-weighted Cohen's kappa per criterion between the judge's score and each counted human score. Pure.
 */
import { AppError } from '../../domain/errors.ts';
import { type Agreement, cohensKappa } from './agreement.ts';
import { parseConversationKey, parseEvalConversation } from './eval-conversation.ts';
import type { Rubric } from './rubric.ts';

/** One human score as stored or exported: `conversation` is `eval:<run>:A/ada.1`, or a bare `A/ada.1` (this run). */
export interface HumanScore {
  conversation: string;
  criterion: string;
  score: number;
  rater?: string | undefined;
  /** Set when one coach turn was rated, not the whole conversation. */
  turn?: number | undefined;
}

/** One human score of one of the run's conversations (`A/ada.1`) on one criterion. */
export interface HumanRating {
  conversation: string;
  criterion: string;
  score: number;
  rater?: string | undefined;
}

export interface AgreementRow extends Agreement {
  criterion: string;
}

/**
 * The scores that count for `runId`, from `rows` oldest first. Coach-turn ratings do not count: the judge scores whole
 * conversations. Other runs' and study conversations' ratings are left out.
 */
export function humanRatingsOfRun(rows: readonly HumanScore[], runId: string | undefined): HumanRating[] {
  const latest = new Map<string, HumanRating>();
  const anonymous: HumanRating[] = [];
  for (const row of rows) {
    if (row.turn !== undefined) continue;
    const ref = parseEvalConversation(row.conversation);
    const key = ref ? (ref.runId === runId ? ref.key : undefined) : parseConversationKey(row.conversation)?.key;
    if (key === undefined) continue;
    const rating: HumanRating = { conversation: key, criterion: row.criterion, score: row.score };
    if (row.rater === undefined || row.rater === '') {
      anonymous.push(rating);
      continue;
    }
    rating.rater = row.rater;
    const identity = JSON.stringify([row.rater, key, row.criterion]);
    latest.delete(identity);
    latest.set(identity, rating);
  }
  return [...anonymous, ...latest.values()];
}

/**
 * Per criterion of the rubric: kappa over the pairs (judge's score, a human's score) of the same conversation. A
 * criterion without such a pair is left out.
 */
export function judgeHumanAgreement(
  rubric: Rubric,
  judged: (conversation: string, criterion: string) => number | undefined,
  humans: readonly HumanRating[],
): AgreementRow[] {
  return rubric.criteria.flatMap((criterion) => {
    const pairs = humans
      .filter((rating) => rating.criterion === criterion.id)
      .flatMap((rating) => {
        const { min, max } = rubric.scale;
        if (!Number.isInteger(rating.score) || rating.score < min || rating.score > max) {
          throw new AppError(
            'invalid_input',
            `the human score ${rating.score} of ${rating.conversation} on ${criterion.id} is off the rubric's scale ${min}..${max}`,
          );
        }
        const score = judged(rating.conversation, criterion.id);
        return score === undefined ? [] : [{ first: score, second: rating.score }];
      });
    const value = cohensKappa(pairs, rubric.scale, 'quadratic');
    return value ? [{ criterion: criterion.id, ...value }] : [];
  });
}
