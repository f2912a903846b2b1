import { describe, expect, it } from 'vitest';
import { matchPollOption, renderPollAsText } from '../../src/channels/poll-text.ts';

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
