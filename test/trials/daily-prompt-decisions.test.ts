/**
 * Decision points at the daily prompt time, on the real daily-prompt handler and job runner (SQLite in memory, manual
 * clock): one decision row per daily prompt, at its target time, decided before the prompt; the availability rules;
 * and the staff pause of randomisation, which still writes each row (unavailable) while the prompts go on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../src/domain/data-keys.ts';
import { writeData } from '../../src/domain/participant-data.ts';
import { type ArmRig, createArmRig, DAY, MODEL_PROMPT } from './arm-rig.ts';
import { designOf } from './trial-fixture.ts';

const EXTRA = 'An extra nudge, drawn at random.';

const study = designOf(`
study: { id: prompt-time-trial, seed: "prompt-time-seed" }
arms:
  - { id: coach, label: Coach }
  - { id: never, label: Never nudged }
decision_points:
  - id: at-prompt
    moment: { type: daily_prompt }
    unavailable_when: [answered_today, idle]
    options: [send, skip]
    messages: { send: { en: "${EXTRA}" } }
    probabilities:
      default: { send: 1, skip: 0 }
      by_arm: { never: { send: 0, skip: 1 } }
`);

let rig: ArmRig | undefined;
afterEach(async () => {
  await rig?.runner.stop();
  await rig?.store.close();
});

describe('a decision point at the daily prompt time', () => {
  it("decides once per daily prompt, at the prompt's target time, with the arm's probabilities", async () => {
    rig = await createArmRig({ study });
    const coached = await rig.enrollInArm('coach', 1);
    const never = await rig.enrollInArm('never', 2);
    await rig.advance(2 * DAY);

    const rows = await rig.store.decisions.listForParticipant(coached);
    expect(rows.map((row) => [row.intendedLocal, row.available, row.option])).toEqual([
      ['2026-03-02 10:00', true, 'send'],
      ['2026-03-03 10:00', true, 'send'],
    ]);
    expect(rows[0]?.intendedAt.toISOString()).toBe('2026-03-02T15:00:00.000Z');
    expect(rows.every((row) => row.designHash === study.hash && row.sentOutboundId !== null)).toBe(true);
    // The decision's message, then the day's prompt: three days of both.
    const texts = rig.messenger.textsFor(coached).filter((text) => text === EXTRA || text === MODEL_PROMPT);
    expect(texts).toEqual([EXTRA, MODEL_PROMPT, EXTRA, MODEL_PROMPT]);

    const neverRows = await rig.store.decisions.listForParticipant(never);
    expect(neverRows.map((row) => [row.option, row.sentOutboundId])).toEqual([
      ['skip', null],
      ['skip', null],
    ]);
    expect(rig.messenger.textsFor(never)).not.toContain(EXTRA);

    // Two prompts unanswered make the participant idle (the engagement guard): day three's row says so.
    await rig.advance(DAY);
    const third = (await rig.store.decisions.listForParticipant(coached))[2];
    expect([third?.localDate, third?.available, third?.unavailableReason]).toEqual(['2026-03-04', false, 'idle']);
  });

  it('records a participant who already answered today, or is idle, as unavailable', async () => {
    rig = await createArmRig({ study });
    const answered = await rig.enrollInArm('coach', 1);
    const idle = await rig.enrollInArm('coach', 2);
    // 09:00 in Toronto: one answered this morning, the other has gone idle.
    await writeData(
      rig.store,
      answered,
      { [DataKey.dailyPromptRespondedAt]: rig.clock.now().toISOString() },
      rig.clock.now(),
    );
    await writeData(rig.store, idle, { [DataKey.engagementState]: 'idle' }, rig.clock.now());
    await rig.advance(2 * 3_600_000);
    const [answeredRow] = await rig.store.decisions.listForParticipant(answered);
    const [idleRow] = await rig.store.decisions.listForParticipant(idle);
    expect([answeredRow?.available, answeredRow?.unavailableReason, answeredRow?.option]).toEqual([
      false,
      'answered_today',
      null,
    ]);
    expect([idleRow?.available, idleRow?.unavailableReason]).toEqual([false, 'idle']);
    expect(rig.messenger.textsFor(answered)).not.toContain(EXTRA);
  });

  it('while randomisation is paused, writes each row as unavailable and sends no option, the prompts going on', async () => {
    rig = await createArmRig({ study });
    const participantId = await rig.enrollInArm('coach', 1);
    await rig.trials.changeRandomisation({ paused: true, reason: 'ethics query on the nudge text', by: 'dr-who' });
    await rig.advance(DAY);
    await rig.trials.changeRandomisation({ paused: false, reason: 'query answered', by: 'dr-who' });
    await rig.advance(DAY);
    const rows = await rig.store.decisions.listForParticipant(participantId);
    expect(rows.map((row) => [row.localDate, row.unavailableReason, row.option])).toEqual([
      ['2026-03-02', 'randomisation_paused', null],
      ['2026-03-03', null, 'send'],
    ]);
    expect(rig.messenger.textsFor(participantId).filter((text) => text === MODEL_PROMPT)).toHaveLength(2);
    expect(rig.messenger.textsFor(participantId).filter((text) => text === EXTRA)).toHaveLength(1);
  });

  it('refuses an empty reason and a pause while paused, changing nothing', async () => {
    rig = await createArmRig({ study });
    await expect(rig.trials.changeRandomisation({ paused: true, reason: '  ', by: 'dr-who' })).rejects.toThrow(
      /reason must not be empty/,
    );
    await expect(rig.trials.changeRandomisation({ paused: false, reason: 'resume', by: 'dr-who' })).rejects.toThrow(
      /already running/,
    );
    expect(await rig.trials.randomisation()).toEqual({ paused: false });
    await rig.trials.changeRandomisation({ paused: true, reason: 'hold', by: 'dr-who' });
    await expect(rig.trials.changeRandomisation({ paused: true, reason: 'again', by: 'x' })).rejects.toThrow(
      /already paused/,
    );
    expect(await rig.trials.randomisation()).toMatchObject({ paused: true, by: 'dr-who', reason: 'hold' });
  });
});
