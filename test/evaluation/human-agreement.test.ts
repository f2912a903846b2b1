/**
 * Which human ratings count for a run's judge–human agreement: whole-conversation scores of this run (or bare keys),
 * each rater's latest score per conversation and criterion; never another run's, a study conversation's or a coach
 * turn's. A human score off the rubric's scale is a clear error.
 */
import { describe, expect, it } from 'vitest';
import { parseEvalConversation } from '../../src/research/ratings/eval-conversation.ts';
import { humanRatingsOfRun, judgeHumanAgreement } from '../../src/research/ratings/human-agreement.ts';
import { parseRubric } from '../../src/research/ratings/rubric.ts';

const rubric = parseRubric(
  'name: r\nscale: { min: 1, max: 5 }\ncriteria:\n  - { id: empathy, name: Empathy, description: warm }\n',
  'test',
);

describe('the human ratings of a run', () => {
  it('keeps each rater’s latest whole-conversation score of this run and leaves the rest out', () => {
    const counted = humanRatingsOfRun(
      [
        { conversation: 'eval:run-1:A/ada.1', criterion: 'empathy', score: 2, rater: 'kim' },
        { conversation: 'eval:run-1:A/ada.1', criterion: 'empathy', score: 5, rater: 'lee' },
        { conversation: 'eval:run-1:A/ada.1', criterion: 'empathy', score: 4, rater: 'kim' },
        { conversation: 'eval:run-1:A/ada.1', criterion: 'empathy', score: 1, rater: 'kim', turn: 3 },
        { conversation: 'eval:run-2:A/ada.1', criterion: 'empathy', score: 1, rater: 'kim' },
        { conversation: 'participant:p_1', criterion: 'empathy', score: 1, rater: 'kim' },
        { conversation: 'B/ada.1', criterion: 'empathy', score: 3 },
      ],
      'run-1',
    );
    expect(counted).toEqual([
      { conversation: 'B/ada.1', criterion: 'empathy', score: 3 },
      { conversation: 'A/ada.1', criterion: 'empathy', score: 5, rater: 'lee' },
      { conversation: 'A/ada.1', criterion: 'empathy', score: 4, rater: 'kim' },
    ]);
    const judged = (conversation: string) => (conversation === 'A/ada.1' ? 4 : 3);
    expect(judgeHumanAgreement(rubric, judged, counted)).toEqual([
      { criterion: 'empathy', kappa: expect.any(Number), observedAgreement: 2 / 3, items: 3 },
    ]);
  });

  it('refuses a human score off the scale, and reads only well-formed conversation names', () => {
    expect(() =>
      judgeHumanAgreement(rubric, () => 3, [{ conversation: 'A/ada.1', criterion: 'empathy', score: 7 }]),
    ).toThrow(/off the rubric's scale 1..5/);
    expect(parseEvalConversation('eval:run-1:B/sam-risk.2')).toEqual({
      runId: 'run-1',
      configuration: 'B',
      persona: 'sam-risk',
      repeat: 2,
      key: 'B/sam-risk.2',
    });
    expect(parseEvalConversation('eval:run 1:B/sam.2')).toBeUndefined();
    expect(parseEvalConversation('participant:p_1')).toBeUndefined();
  });
});
