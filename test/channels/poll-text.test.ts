import { describe, expect, it } from 'vitest';
import { renderPollAsText } from '../../src/channels/poll-text.ts';
import { matchPollOption } from '../../src/inbound/poll-answer-matching.ts';
import { latestPollRun, nextPollNumber, onlyPolls, optionByNumber } from '../../src/inbound/recorded-polls.ts';

const OPTIONS = ['Done', 'Next time'];

describe('renderPollAsText', () => {
  it('asks for the number of an option under the question', () => {
    expect(renderPollAsText({ question: 'Did you do it?', options: OPTIONS })).toBe(
      'Did you do it?\nReply 1 for Done, 2 for Next time',
    );
  });
});

describe('matchPollOption', () => {
  it.each([
    ['1', 'Done'],
    ['2', 'Next time'],
    [' 2) ', 'Next time'],
    ['1.', 'Done'],
    ['Done', 'Done'],
    ['done', 'Done'],
    ['  NEXT TIME! ', 'Next time'],
  ])('reads %j as %j', (reply, option) => {
    expect(matchPollOption(reply, OPTIONS)).toBe(option);
  });

  it.each(['0', '3', '12', 'I am done', 'Done, finally', 'yes', '', '1 and 2'])('does not guess from %j', (reply) => {
    expect(matchPollOption(reply, OPTIONS)).toBeUndefined();
  });
});

describe('polls numbered on across a run (recorded-polls.ts)', () => {
  const poll = (id: string, content: string) => ({
    role: 'assistant' as const,
    kind: 'poll' as const,
    content,
    outboundId: id,
  });
  const text = (content: string) => ({ role: 'assistant' as const, kind: 'proactive' as const, content });
  const user = (content: string) => ({ role: 'user' as const, kind: 'message' as const, content });
  const done = poll('out_1', 'Did you do it? [Done | Next time]');
  const intensity = poll('out_2', "How's the intensity? [Decrease | Keep current | Increase]");

  it('continues the numbers only right after another poll', () => {
    expect(nextPollNumber([])).toBe(1);
    expect(nextPollNumber([text('Walk after breakfast')])).toBe(1);
    expect(nextPollNumber([text('Walk after breakfast'), done])).toBe(3);
    expect(nextPollNumber([done, intensity])).toBe(6);
    expect(nextPollNumber([done, intensity, text('Friendly check-in')])).toBe(1);
    expect(nextPollNumber([done, user('hi')])).toBe(1);
  });

  it('tells whether a look-back holds nothing but polls (the run may start before it)', () => {
    expect(onlyPolls([done, intensity])).toBe(true);
    expect(onlyPolls([text('Walk after breakfast'), done])).toBe(false);
    expect(onlyPolls([done, user('hi')])).toBe(false);
  });

  it('finds the latest run since the participant wrote, even with a reminder after it', () => {
    const entries = [user('hi'), done, intensity, text('Friendly check-in')];
    const run = latestPollRun(entries);
    expect(run.map((recorded) => recorded.id)).toEqual(['out_1', 'out_2']);
    expect(optionByNumber(1, run)).toMatchObject({ poll: { id: 'out_1' }, option: 'Done' });
    expect(optionByNumber(2, run)).toMatchObject({ poll: { id: 'out_1' }, option: 'Next time' });
    expect(optionByNumber(3, run)).toMatchObject({ poll: { id: 'out_2' }, option: 'Decrease' });
    expect(optionByNumber(5, run)).toMatchObject({ poll: { id: 'out_2' }, option: 'Increase' });
    expect(optionByNumber(0, run)).toBeUndefined();
    expect(optionByNumber(6, run)).toBeUndefined();
    // A later run replaces it; polls before the participant's last message are not numbered any more.
    expect(latestPollRun([...entries, text('Next day'), done]).map((recorded) => recorded.id)).toEqual(['out_1']);
    expect(latestPollRun([done, intensity, user('ok')])).toEqual([]);
  });
});
