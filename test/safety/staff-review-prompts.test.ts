/**
 * A participant under staff review gets no daily prompt until a person resolves the alert; then the schedule continues
 * from its next due time, without the days missed meanwhile (the real daily-prompt handler and timers).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createAlertService } from '../../src/safety/alert-service.ts';
import { createTimerHarness, HOUR, START, type TimerHarness } from '../scheduling/timers/harness.ts';

let harness: TimerHarness;
afterEach(() => harness.close());

describe('staff review and the daily prompt', () => {
  it('skips the prompts while under review, and resumes the next day after the review without a burst', async () => {
    harness = await createTimerHarness();
    const participant = await harness.enrol();
    harness.clock.set(new Date(START.getTime() - HOUR));
    await harness.scheduleDaily(participant.id, '09:10');
    await harness.advance(HOUR);
    const prompts = () => harness.sentTexts(participant.id).filter((text) => text.includes('walk')).length;
    const before = prompts();
    expect(before).toBe(1);

    let ids = 0;
    const alerts = createAlertService({
      store: harness.store,
      clock: harness.clock,
      newId: (prefix) => `${prefix}_${++ids}`,
      routes: [],
    });
    const alertId = await harness.store.transaction(() =>
      alerts.raise({
        participantId: participant.id,
        kind: 'risk',
        detector: 'keywords',
        rule: 'kill myself',
        score: undefined,
        urgency: 'urgent',
        reason: 'test',
        sourceMessageId: undefined,
        review: true,
      }),
    );
    await harness.advance(3 * 24 * HOUR);
    expect(prompts()).toBe(before);
    const skipped = await harness.events(participant.id, 'prompt-skipped');
    expect(skipped.map((event) => event.data['reason'])).toEqual([
      'under-staff-review',
      'under-staff-review',
      'under-staff-review',
    ]);

    await alerts.resolve(alertId, 'ada', 'spoke with them');
    expect(await harness.store.alerts.underReview(participant.id)).toBe(false);
    await harness.advance(24 * HOUR);
    expect(prompts()).toBe(before + 1);
  });
});
