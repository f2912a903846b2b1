/**
 * What an arm changes, on the real daily-prompt handler, timers, job runner and participant service (SQLite in
 * memory, manual clock): a static arm's prompt comes from the design's list with no generation call, a no-prompt arm
 * is sent nothing, a personalised arm goes to the model, and an arm's switched-off timers are never armed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DAILY_PROMPT_JOB } from '../../src/scheduling/daily-prompt-jobs.ts';
import { TimerJobKind } from '../../src/scheduling/timers/index.ts';
import { type ArmRig, createArmRig, DAY, MODEL_PROMPT } from './arm-rig.ts';

let rig: ArmRig | undefined;
afterEach(async () => {
  await rig?.runner.stop();
  await rig?.store.close();
});

describe('what an arm changes', () => {
  it('sends a static arm the texts of its list in turn, in its language, with no generation call', async () => {
    rig = await createArmRig();
    const english = await rig.enrollInArm('static', 1);
    const spanish = await rig.enrollInArm('static', 2, 'es');
    await rig.advance(3 * DAY);
    expect(rig.modelCalls).toEqual([]);
    const englishTexts = rig.messenger.textsFor(english).filter((text) => text.startsWith('Static'));
    expect(englishTexts).toEqual(['Static one.', 'Static two.', 'Static one.']);
    expect(rig.messenger.textsFor(spanish).filter((text) => text.startsWith('Estático'))).toHaveLength(3);
    const chosen = await rig.store.events.list({ participantId: english });
    expect(chosen.filter((event) => event.type === 'static-prompt-chosen')).toHaveLength(3);
  });

  it('sends a no-prompt arm nothing, recording each skipped day', async () => {
    rig = await createArmRig();
    const participantId = await rig.enrollInArm('assessment', 1);
    await rig.advance(2 * DAY);
    expect(rig.messenger.textsFor(participantId)).toEqual([]);
    expect(rig.modelCalls).toEqual([]);
    const skipped = (await rig.store.events.list({ participantId })).filter((event) => event.type === 'prompt-skipped');
    expect(skipped.map((event) => event.data['reason'])).toEqual([
      'arm-without-daily-prompt',
      'arm-without-daily-prompt',
    ]);
    expect(await rig.pendingKinds(participantId)).toEqual([DAILY_PROMPT_JOB]);
  });

  it('sends an assessment-only arm with done_poll the Done poll alone each day, counted as its prompt', async () => {
    rig = await createArmRig();
    const polled = await rig.enrollInArm('assessment-poll', 1);
    const silent = await rig.enrollInArm('assessment', 2);
    await rig.advance(2 * DAY);
    expect(rig.modelCalls).toEqual([]);
    const sent = rig.messenger.sent.filter((message) => message.participantId === polled);
    // Its reminders and intensity poll are switched off in the design: the Done poll is all it gets.
    expect(sent.map((message) => message.message)).toEqual([
      { type: 'poll', question: 'Did you do it?', options: ['Done', 'Next time'] },
      { type: 'poll', question: 'Did you do it?', options: ['Done', 'Next time'] },
    ]);
    expect(rig.messenger.textsFor(silent)).toEqual([]);
    const days = (await rig.store.events.list({ participantId: polled })).filter(
      (event) => event.type === 'prompt-sent',
    );
    expect(days.map((event) => [event.data['done_poll_only'], event.data['prompt']])).toEqual([
      [true, ''],
      [true, ''],
    ]);
    expect(await rig.pendingKinds(polled)).toContain(DAILY_PROMPT_JOB);
  });

  it('asks the model for a personalised arm, and arms its reminder; an arm without nudges gets none', async () => {
    rig = await createArmRig();
    const coached = await rig.enrollInArm('coach', 1);
    const quiet = await rig.enrollInArm('quiet', 2);
    await rig.advance(2 * 3_600_000);
    expect(rig.modelCalls.sort()).toEqual([coached, quiet].sort());
    expect(rig.messenger.textsFor(coached)).toContain(MODEL_PROMPT);
    expect(rig.messenger.textsFor(quiet)).toContain(MODEL_PROMPT);
    expect(await rig.pendingKinds(coached)).toContain(TimerJobKind.DAILY_PROMPT_REMINDER);
    expect(await rig.pendingKinds(quiet)).not.toContain(TimerJobKind.DAILY_PROMPT_REMINDER);
    expect(await rig.pendingKinds(quiet)).not.toContain(TimerJobKind.AUTO_FEEDBACK);
  });
});
