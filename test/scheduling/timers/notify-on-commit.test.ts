import { afterEach, describe, expect, it } from 'vitest';
import { ConversationState } from '../../../src/domain/conversation-state.ts';
import { sequentialIds } from '../../../src/domain/ids.ts';
import { silentLog } from '../../../src/domain/log.ts';
import { newFlowState } from '../../../src/domain/participant-data.ts';
import { createRecordingMessenger } from '../../../src/engine/recording-messenger.ts';
import { createManualClock } from '../../../src/scheduling/clock.ts';
import { createJobRunner } from '../../../src/scheduling/job-runner-service.ts';
import { DEFAULT_TIMER_CONFIG, registerTimers } from '../../../src/scheduling/timers/index.ts';
import { createInProcessLock } from '../../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../../src/store/store.ts';
import { participantFixture } from '../../support/participant-fixture.ts';

const START = new Date('2026-03-02T14:00:00.000Z');
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
});

describe('timers scheduled inside a transaction', () => {
  it('wake the job runner once the transaction has committed, when the runner can see the job', async () => {
    store = await createSqliteStore({ filename: ':memory:' });
    const clock = createManualClock(START);
    const runner = createJobRunner({ store, clock, lock: createInProcessLock(), log: silentLog });
    const steps: string[] = [];
    const notify = runner.notify.bind(runner);
    runner.notify = () => {
      steps.push('runner notified');
      notify();
    };
    const timers = registerTimers({
      runner,
      store,
      clock,
      newId: sequentialIds(),
      messenger: createRecordingMessenger(),
      config: DEFAULT_TIMER_CONFIG,
      log: silentLog,
    });
    await store.participants.create(participantFixture('p_1', '+15551230001', START));
    await store.flowStates.save(newFlowState('p_1', START));
    const scheduler = timers.delayedTransitions;

    await store.transaction(async () => {
      await scheduler.schedule({
        participantId: 'p_1',
        target: ConversationState.FEEDBACK,
        delayMinutes: 30,
        now: START,
      });
      steps.push('scheduled, not committed');
    });
    expect(steps).toEqual(['scheduled, not committed', 'runner notified']);
  });
});
