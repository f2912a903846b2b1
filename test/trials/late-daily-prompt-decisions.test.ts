/**
 * A decision point at the daily prompt time when the prompt's job runs late or stale, on the real daily-prompt
 * handler and job runner (SQLite in memory, manual clock; the prompt at 10:00 Toronto, due at 09:50, an hour's
 * grace): a day whose prompt is skipped for lateness has its decision recorded as `missed_moment` with nothing sent,
 * and a job that is no longer its schedule's timer decides nothing, the job for the new time deciding instead.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { armSchedule, DAILY_PROMPT_JOB, disarmSchedule } from '../../src/scheduling/daily-prompt-jobs.ts';
import { readSchedules, writeSchedules } from '../../src/scheduling/schedule-registry.ts';
import { type ArmRig, createArmRig, DAY, HOUR, MODEL_PROMPT } from './arm-rig.ts';
import { designOf } from './trial-fixture.ts';

const EXTRA = 'An extra nudge, drawn at random.';

const study = designOf(`
study: { id: late-prompt-trial, seed: "late-prompt-seed" }
arms:
  - { id: coach, label: Coach }
decision_points:
  - id: at-prompt
    moment: { type: daily_prompt }
    options: [send, skip]
    messages: { send: { en: "${EXTRA}" } }
    probabilities: { default: { send: 1, skip: 0 } }
`);

/** Monday's prompt is due at 09:50 in Toronto (14:50 UTC). */
const MONDAY_DUE = new Date('2026-03-02T14:50:00.000Z');

let rig: ArmRig | undefined;
afterEach(async () => {
  await rig?.runner.stop();
  await rig?.store.close();
});

async function pendingPrompt(target: ArmRig, participantId: string) {
  const [job] = await target.store.jobs.listPending({ participantId, kind: DAILY_PROMPT_JOB });
  if (!job) throw new Error('no daily prompt pending');
  return job;
}

const texts = (target: ArmRig, participantId: string) =>
  target.messenger.textsFor(participantId).filter((text) => text === EXTRA || text === MODEL_PROMPT);

describe('a decision point at the daily prompt time, late', () => {
  it('decides with the prompt when the job runs exactly the grace late', async () => {
    rig = await createArmRig({ study });
    const participantId = await rig.enrollInArm('coach', 1);
    rig.clock.set(new Date(MONDAY_DUE.getTime() + HOUR));
    await rig.runner.runDue();
    const [row] = await rig.store.decisions.listForParticipant(participantId);
    expect([row?.available, row?.option, row?.intendedLocal]).toEqual([true, 'send', '2026-03-02 10:00']);
    expect(texts(rig, participantId)).toEqual([EXTRA, MODEL_PROMPT]);
  });

  it('records the moment as missed when the prompt is skipped for lateness, sending neither', async () => {
    rig = await createArmRig({ study });
    const participantId = await rig.enrollInArm('coach', 1);
    // Down from 09:00 until a millisecond past the grace: the prompt is skipped, and so is the decision.
    rig.clock.set(new Date(MONDAY_DUE.getTime() + HOUR + 1));
    await rig.runner.runDue();

    const [skipped] = await rig.store.events.list({ participantId, type: 'prompt-skipped' });
    expect(skipped?.data).toMatchObject({ reason: 'missed-grace', local_date: '2026-03-02' });
    const rows = await rig.store.decisions.listForParticipant(participantId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      localDate: '2026-03-02',
      intendedLocal: '2026-03-02 10:00',
      available: false,
      unavailableReason: 'missed_moment',
      option: null,
      draw: null,
      sentOutboundId: null,
      sentAt: null,
    });
    expect(texts(rig, participantId)).toEqual([]);

    // Tuesday's prompt runs on time: decided and sent as usual, one row for each day.
    await rig.advance(DAY);
    const after = await rig.store.decisions.listForParticipant(participantId);
    expect(after.map((row) => [row.localDate, row.unavailableReason, row.option])).toEqual([
      ['2026-03-02', 'missed_moment', null],
      ['2026-03-03', null, 'send'],
    ]);
    expect(texts(rig, participantId)).toEqual([EXTRA, MODEL_PROMPT]);
  });
});

describe('a decision point at the daily prompt time, stale job', () => {
  /** The participant's schedule replaced by one at `time` (as the scheduler tool does), at the rig's clock. */
  async function reschedule(target: ArmRig, participantId: string, time: string) {
    const now = target.clock.now();
    await target.store.transaction(async (tx) => {
      for (const schedule of await readSchedules(tx, participantId)) {
        await disarmSchedule(tx, participantId, schedule, now);
      }
      await writeSchedules(tx, participantId, [], now);
      await armSchedule(
        { store: tx, newId: target.newId, random: () => 0, prepTimeMinutes: 10 },
        {
          participantId,
          schedule: {
            id: target.newId('sched'),
            type: 'fixed',
            fixed_time: time,
            timezone: 'America/Toronto',
            created_at: now.toISOString(),
            timer_id: '',
          },
          now,
        },
      );
    });
  }

  it('decides nothing for the old time; the job for the new time decides the day once', async () => {
    rig = await createArmRig({ study });
    const participantId = await rig.enrollInArm('coach', 1);
    const stale = await pendingPrompt(rig, participantId);
    // Moved to 11:00 while the 10:00 job was already claimed: it still runs, at its time.
    await reschedule(rig, participantId, '11:00');
    rig.clock.set(stale.runAt);
    await rig.dailyPromptHandler(stale);
    expect(await rig.store.decisions.listForParticipant(participantId)).toEqual([]);
    expect(texts(rig, participantId)).toEqual([]);

    await rig.advance(2 * HOUR);
    const rows = await rig.store.decisions.listForParticipant(participantId);
    expect(rows.map((row) => [row.localDate, row.intendedLocal, row.option])).toEqual([
      ['2026-03-02', '2026-03-02 11:00', 'send'],
    ]);
    expect(texts(rig, participantId)).toEqual([EXTRA, MODEL_PROMPT]);
  });

  it('leaves the day without a row when the new time has already passed today', async () => {
    rig = await createArmRig({ study });
    const participantId = await rig.enrollInArm('coach', 1);
    const stale = await pendingPrompt(rig, participantId);
    // Moved to 08:00 at 09:00: the next prompt is Tuesday's.
    await reschedule(rig, participantId, '08:00');
    rig.clock.set(stale.runAt);
    await rig.dailyPromptHandler(stale);
    await rig.advance(DAY);
    const rows = await rig.store.decisions.listForParticipant(participantId);
    expect(rows.map((row) => [row.localDate, row.intendedLocal])).toEqual([['2026-03-03', '2026-03-03 08:00']]);
    expect(texts(rig, participantId)).toEqual([EXTRA, MODEL_PROMPT]);
  });
});
