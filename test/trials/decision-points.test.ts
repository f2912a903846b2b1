/**
 * Micro-randomised decision points in process: one decision row per moment (two a day), unavailable ones recorded
 * with why, each with the arm's probabilities, the draw and the option, what was sent, the proximal outcome filled
 * once known; and a moment decided once however often its job runs.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ParticipantStatus } from '../../src/domain/participant.ts';
import { exportToDirectory } from '../../src/research/export/export-to-directory.ts';
import { drawOption } from '../../src/trials/decision-moments.ts';
import { createDecisionRig, type DecisionRig, decisionStudy, HOUR } from './decision-rig.ts';
import { phoneFor } from './trial-fixture.ts';

let rig: DecisionRig | undefined;
afterEach(async () => {
  await rig?.runner.stop();
  await rig?.store.close();
});

async function enroll(target: DecisionRig, index: number, arm: string) {
  const participant = await target.participants.enroll(
    { phoneNumber: phoneFor(index), timezone: 'America/Toronto' },
    { greet: false },
  );
  await target.trials.overrideArm(participant.id, { armId: arm, reason: 'test arm', by: 'test' });
  return participant.id;
}

describe('decision points', () => {
  it('decides every moment once, recording availability, probabilities, draw, option and what was sent', async () => {
    rig = await createDecisionRig();
    const always = await enroll(rig, 1, 'b');
    const coinFlip = await enroll(rig, 2, 'a');
    await rig.advance(4 * 24 * HOUR);

    for (const participantId of [always, coinFlip]) {
      const decisions = await rig.store.decisions.listForParticipant(participantId);
      // Monday to Thursday at noon and at six: eight moments, one row each.
      expect(decisions.map((row) => `${row.localDate}#${row.slot}`)).toEqual(
        ['2026-03-02', '2026-03-03', '2026-03-04', '2026-03-05'].flatMap((date) => [`${date}#0`, `${date}#1`]),
      );
      for (const row of decisions) {
        expect(row.designHash).toBe(decisionStudy.hash);
        const evening = row.slot === 1;
        // 18:00 plus up to 30 minutes of jitter is inside the quiet hours (17:00-19:00).
        expect([row.available, row.unavailableReason]).toEqual(evening ? [false, 'quiet_hours'] : [true, null]);
        expect(row.intendedLocal).toMatch(evening ? / 18:[0-3]\d$/ : / 12:[0-3]\d$/);
      }
    }
    const [first] = await rig.store.decisions.listForParticipant(always);
    expect(first).toMatchObject({ armId: 'b', probabilities: { send: 1, skip: 0 }, option: 'send' });
    expect(first?.sentOutboundId).toEqual(expect.any(String));
    expect((await rig.nudges(always)).length).toBe(4);

    const flips = (await rig.store.decisions.listForParticipant(coinFlip)).filter((row) => row.available);
    for (const row of flips) {
      expect(row.probabilities).toEqual({ send: 0.5, skip: 0.5 });
      // The draw is recorded and recomputable from the design.
      const point = decisionStudy.design.decision_points[0];
      if (!point) throw new Error('no decision point');
      expect(drawOption(decisionStudy.design, point, coinFlip, row, row.probabilities)).toEqual({
        option: row.option,
        draw: row.draw,
      });
      expect(row.sentOutboundId !== null).toBe(row.option === 'send');
    }
    expect((await rig.nudges(coinFlip)).length).toBe(flips.filter((row) => row.option === 'send').length);
  });

  it('records a paused participant as unavailable and sends them nothing', async () => {
    rig = await createDecisionRig();
    const participantId = await enroll(rig, 1, 'b');
    await rig.participants.update(participantId, { status: ParticipantStatus.PAUSED });
    await rig.advance(2 * 24 * HOUR);
    const decisions = await rig.store.decisions.listForParticipant(participantId);
    expect(decisions).toHaveLength(4);
    expect(new Set(decisions.map((row) => row.unavailableReason))).toEqual(new Set(['paused']));
    expect(decisions.every((row) => row.option === null && row.draw === null)).toBe(true);
    expect(await rig.nudges(participantId)).toEqual([]);
  });

  it('fills the proximal outcome: replied within two hours, or not', async () => {
    rig = await createDecisionRig();
    const participantId = await enroll(rig, 1, 'b');
    // To Monday 13:00 in Toronto: the noon nudge has gone out; the participant answers at once.
    await rig.advance(4 * HOUR);
    await rig.store.transcript.append([
      { participantId, role: 'user', kind: 'message', content: 'done, walked!', createdAt: rig.clock.now() },
    ]);
    // To Tuesday 15:00: the noon nudge's two hours are over, unanswered.
    await rig.advance(26 * HOUR);
    const [monday, , tuesday] = await rig.store.decisions.listForParticipant(participantId);
    expect(monday?.outcome).toMatchObject({ type: 'replied_within', hours: 2, replied: true });
    expect(tuesday?.outcome).toMatchObject({ replied: false, first_reply_at: null });
    expect(monday?.outcomeAt).toBeInstanceOf(Date);
  });

  it('decides a moment once when its job runs again (a retry, or a re-run after a crash)', async () => {
    rig = await createDecisionRig();
    const participantId = await enroll(rig, 1, 'b');
    const [job] = (await rig.store.jobs.listPending({})).filter((pending) => pending.kind === 'decision_point');
    if (!job) throw new Error('no decision job armed at enrollment');
    rig.clock.set(job.runAt);
    await Promise.all([rig.handler(job), rig.handler(job)]);
    await rig.handler(job);
    expect(await rig.store.decisions.listForParticipant(participantId)).toHaveLength(1);
    expect(await rig.nudges(participantId)).toHaveLength(1);
    const pending = (await rig.store.jobs.listPending({})).filter((next) => next.kind === 'decision_point');
    expect(pending).toHaveLength(1);
  });

  it('exports every decision, documented in the codebook', async () => {
    rig = await createDecisionRig();
    const participantId = await enroll(rig, 1, 'b');
    await rig.advance(2 * 24 * HOUR);
    const directory = await mkdtemp(join(tmpdir(), 'promptpipe-decisions-export-'));
    try {
      await exportToDirectory({
        directory,
        format: 'jsonl',
        context: {
          store: rig.store,
          filter: { participantIds: [], since: undefined },
          pseudonymizer: undefined,
          defaultChannel: 'webhook',
        },
        version: 'test',
        exportedAt: new Date('2026-03-06T00:00:00Z'),
      });
      const lines = (await readFile(join(directory, 'decisions.jsonl'), 'utf8')).trim().split('\n');
      const rows = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(rows).toHaveLength((await rig.store.decisions.listForParticipant(participantId)).length);
      expect(rows[0]).toMatchObject({
        participant_id: participantId,
        arm: 'b',
        decision_point: 'nudge',
        available: true,
        probabilities: { send: 1, skip: 0 },
        option: 'send',
        design_hash: decisionStudy.hash,
      });
      const codebook = await readFile(join(directory, 'codebook.md'), 'utf8');
      expect(codebook).toContain('| unavailable_reason | string |');
      expect(codebook).toContain('| probabilities | json |');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
