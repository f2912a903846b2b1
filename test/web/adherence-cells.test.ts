/** What each cell of the adherence grid says, from a participant's study days and inactive spans, in their zone. */
import { describe, expect, it } from 'vitest';
import type { AdherenceRow } from '../../src/store/ports/roster-reads.ts';
import { adherenceCells } from '../../src/web/adherence-cells.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const DATES = ['2026-03-01', '2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05', '2026-03-06', '2026-03-07'];

function row(overrides: Partial<AdherenceRow> = {}, timezone = 'America/Toronto'): AdherenceRow {
  return {
    participant: participantFixture('p', '+15550000001', new Date('2026-03-02T15:00:00Z'), { timezone }),
    promptsSent: 0,
    promptsAnswered: 0,
    promptsDone: 0,
    days: [],
    inactive: [],
    ...overrides,
  };
}

const day = (localDate: string, answered: boolean, done: boolean) => ({
  localDate,
  promptSentAt: new Date(`${localDate}T13:00:00Z`),
  answered,
  done,
});

describe('adherence cells', () => {
  it('says done, answered, no answer, paused or not sent for each local date, blank outside the study', () => {
    const cells = adherenceCells(
      row({
        days: [day('2026-03-02', true, true), day('2026-03-03', true, false), day('2026-03-04', false, false)],
        inactive: [
          { status: 'paused', from: new Date('2026-03-05T14:00:00Z'), until: new Date('2026-03-06T14:00:00Z') },
        ],
      }),
      DATES,
      // 7 March, 03:00 in Toronto: the 7th has begun there, without a prompt yet.
      new Date('2026-03-07T08:00:00Z'),
    );
    expect(cells.map((cell) => [cell.state, cell.description])).toEqual([
      ['blank', ''],
      ['done', 'Done'],
      ['answered', 'answered'],
      ['no-answer', 'no answer'],
      ['paused', 'paused'],
      ['paused', 'paused'],
      ['not-sent', 'not sent yet'],
    ]);
  });

  it("uses the participant's own dates: a date that has not begun where they live is blank", () => {
    // 06:00 UTC on the 7th is still the 6th in Toronto, and already the 7th in Tokyo.
    const now = new Date('2026-03-07T03:00:00Z');
    expect(adherenceCells(row(), ['2026-03-07'], now)[0]?.state).toBe('blank');
    expect(adherenceCells(row({}, 'Asia/Tokyo'), ['2026-03-07'], now)[0]?.state).toBe('not-sent');
  });

  it('names why a day had no prompt when the participant had left the study, and today’s unanswered prompt', () => {
    const cells = adherenceCells(
      row({
        days: [day('2026-03-06', false, false)],
        inactive: [
          { status: 'withdrawn', from: new Date('2026-03-03T12:00:00Z'), until: new Date('2026-03-05T12:00:00Z') },
        ],
      }),
      ['2026-03-04', '2026-03-06'],
      new Date('2026-03-06T20:00:00Z'),
    );
    expect(cells.map((cell) => cell.description)).toEqual(['not sent (withdrawn)', 'no answer yet']);
  });
});
