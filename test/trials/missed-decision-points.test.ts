/**
 * Decision points at local times whose job runs late (the server was down): a moment more than MISSED_PROMPT_GRACE
 * (an hour in the rig) past its intended, jittered time is recorded unavailable as `missed_moment`, nothing drawn or
 * sent; every missed moment still gets its one row, and the chain resumes at the first moment still ahead.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DECISION_OUTCOME_JOB, DECISION_POINT_JOB } from '../../src/trials/decision-jobs.ts';
import { createDecisionRig, type DecisionRig, HOUR } from './decision-rig.ts';
import { phoneFor } from './trial-fixture.ts';

let rig: DecisionRig | undefined;
afterEach(async () => {
  await rig?.runner.stop();
  await rig?.store.close();
});

/** Enrolls someone in arm b (the nudge is always sent when available), Monday 09:00 in Toronto. */
async function enrollAlwaysNudged(target: DecisionRig) {
  const participant = await target.participants.enroll(
    { phoneNumber: phoneFor(1), timezone: 'America/Toronto' },
    { greet: false },
  );
  await target.trials.overrideArm(participant.id, { armId: 'b', reason: 'test arm', by: 'test' });
  return participant.id;
}

async function pendingDecisionJob(target: DecisionRig) {
  const [job] = await target.store.jobs.listPending({ kind: DECISION_POINT_JOB });
  if (!job) throw new Error('no decision job pending');
  return job;
}

describe('a decision point at local times, decided late', () => {
  it('decides a moment run exactly the grace late, and records one a millisecond later as missed', async () => {
    rig = await createDecisionRig();
    const participantId = await enrollAlwaysNudged(rig);
    const noon = await pendingDecisionJob(rig);
    rig.clock.set(new Date(noon.runAt.getTime() + HOUR));
    await rig.handler(noon);
    // The next one is Monday evening's (inside the quiet hours were it decided in time).
    const evening = await pendingDecisionJob(rig);
    rig.clock.set(new Date(evening.runAt.getTime() + HOUR + 1));
    await rig.handler(evening);

    const rows = await rig.store.decisions.listForParticipant(participantId);
    expect(rows.map((row) => [row.slot, row.available, row.unavailableReason, row.option])).toEqual([
      [0, true, null, 'send'],
      [1, false, 'missed_moment', null],
    ]);
    expect([rows[1]?.draw, rows[1]?.sentOutboundId, rows[1]?.sentAt]).toEqual([null, null, null]);
    expect(rows[1]?.intendedAt).toEqual(evening.runAt);
    expect(await rig.nudges(participantId)).toHaveLength(1);
  });

  it('after an outage, records every missed moment once, sends nothing late, and resumes on time', async () => {
    rig = await createDecisionRig();
    const participantId = await enrollAlwaysNudged(rig);
    // Down from Monday 09:00 until Tuesday 14:00 in Toronto: Monday noon and evening and Tuesday noon are missed.
    rig.clock.set(new Date('2026-03-03T19:00:00.000Z'));
    await rig.runner.runDue();

    const missed = await rig.store.decisions.listForParticipant(participantId);
    expect(missed.map((row) => [`${row.localDate}#${row.slot}`, row.unavailableReason, row.option])).toEqual([
      ['2026-03-02#0', 'missed_moment', null],
      ['2026-03-02#1', 'missed_moment', null],
      ['2026-03-03#0', 'missed_moment', null],
    ]);
    expect(missed.every((row) => !row.available && row.draw === null && row.sentOutboundId === null)).toBe(true);
    expect(await rig.nudges(participantId)).toEqual([]);
    // No proximal outcome is awaited for a moment nothing was sent at.
    expect(await rig.store.jobs.listPending({ kind: DECISION_OUTCOME_JOB })).toEqual([]);
    const next = await pendingDecisionJob(rig);
    expect([next.payload['local_date'], next.payload['slot']]).toEqual(['2026-03-03', 1]);

    // Back on time: Wednesday noon is decided and sent as usual.
    await rig.advance(24 * HOUR);
    const after = await rig.store.decisions.listForParticipant(participantId);
    expect(after.map((row) => [`${row.localDate}#${row.slot}`, row.unavailableReason])).toEqual([
      ['2026-03-02#0', 'missed_moment'],
      ['2026-03-02#1', 'missed_moment'],
      ['2026-03-03#0', 'missed_moment'],
      ['2026-03-03#1', 'quiet_hours'],
      ['2026-03-04#0', null],
    ]);
    expect(await rig.nudges(participantId)).toHaveLength(1);
  });
});
