/**
 * The held-job part of the store contract (`JobRepository.hold` / `wakeHeld`): a job waiting for its channel keeps
 * its one row, its attempt uncounted, and is woken by name. Called from `describeStoreContract`, so it runs on every
 * adapter.
 */
import { describe, expect, it } from 'vitest';
import type { NewJob, Store } from '../../src/store/store.ts';

const BASE = Date.parse('2025-03-01T08:00:00.000Z');
const at = (minutes: number): Date => new Date(BASE + minutes * 60_000 + 123);

function delivery(id: string, overrides: Partial<NewJob> = {}): NewJob {
  return { id, kind: 'deliver_message', participantId: 'participant_1', runAt: at(0), payload: { id }, ...overrides };
}

async function claimOne(store: Store, minutes: number) {
  const [claimed] = await store.jobs.claimDue({ now: at(minutes), owner: 'worker', leaseMs: 60_000, limit: 1 });
  return claimed;
}

export function describeJobHoldContract(current: () => Store): void {
  describe('held jobs', () => {
    it('holds a running job in its own row: pending again at the given time, its attempt not counted', async () => {
      const store = current();
      await store.jobs.enqueue(delivery('job_1', { maxAttempts: 8 }), at(0));
      expect((await claimOne(store, 0))?.attempts).toBe(1);
      await store.jobs.hold('job_1', { until: at(30), now: at(0), wakeOn: 'whatsapp-web' });
      expect(await store.jobs.get('job_1')).toMatchObject({
        status: 'pending',
        attempts: 0,
        runAt: at(30),
        leaseOwner: undefined,
        leaseUntil: undefined,
      });
      expect(await claimOne(store, 29)).toBeUndefined();
      expect(await store.jobs.nextDueAt()).toEqual(at(30));
      // Held a whole day, every half hour: still the one row, never an attempt spent.
      for (let minutes = 30; minutes <= 24 * 60; minutes += 30) {
        const again = await claimOne(store, minutes);
        expect(again).toMatchObject({ id: 'job_1', attempts: 1 });
        await store.jobs.hold('job_1', { until: at(minutes + 30), now: at(minutes), wakeOn: 'whatsapp-web' });
      }
      const rows = await store.research.jobsPage({}, undefined, 100);
      expect(rows.map((job) => [job.id, job.status, job.attempts])).toEqual([['job_1', 'pending', 0]]);
    });

    it('wakes only the jobs held for that channel, and only once', async () => {
      const store = current();
      for (const id of ['job_web', 'job_rate_limited', 'job_other_channel']) {
        await store.jobs.enqueue(delivery(id, { participantId: `participant_${id}` }), at(0));
      }
      await store.jobs.enqueue(delivery('job_later', { runAt: at(90) }), at(0));
      await store.jobs.claimDue({ now: at(0), owner: 'worker', leaseMs: 60_000, limit: 3 });
      await store.jobs.hold('job_web', { until: at(60), now: at(1), wakeOn: 'whatsapp-web' });
      await store.jobs.hold('job_rate_limited', { until: at(60), now: at(1) });
      await store.jobs.hold('job_other_channel', { until: at(60), now: at(1), wakeOn: 'telegram' });

      expect(await store.jobs.wakeHeld('whatsapp-web', at(2))).toBe(1);
      expect(await store.jobs.get('job_web')).toMatchObject({ status: 'pending', runAt: at(2) });
      expect(await store.jobs.get('job_rate_limited')).toMatchObject({ runAt: at(60) });
      expect(await store.jobs.get('job_other_channel')).toMatchObject({ runAt: at(60) });
      expect(await store.jobs.get('job_later')).toMatchObject({ runAt: at(90) });
      // Already due: nothing to wake. Claimed again, it is no longer held.
      expect(await store.jobs.wakeHeld('whatsapp-web', at(3))).toBe(0);
      expect((await claimOne(store, 3))?.id).toBe('job_web');
      await store.jobs.fail('job_web', 'send failed', at(3), at(50));
      expect(await store.jobs.wakeHeld('whatsapp-web', at(4))).toBe(0);
      expect(await store.jobs.get('job_web')).toMatchObject({ runAt: at(50), attempts: 1 });
    });

    it('leaves alone a job that is not running, and a held job stays cancellable', async () => {
      const store = current();
      await store.jobs.enqueue(delivery('job_1'), at(0));
      await store.jobs.hold('job_1', { until: at(30), now: at(0), wakeOn: 'whatsapp-web' });
      expect(await store.jobs.get('job_1')).toMatchObject({ status: 'pending', runAt: at(0), attempts: 0 });
      await claimOne(store, 0);
      await store.jobs.hold('job_1', { until: at(30), now: at(0), wakeOn: 'whatsapp-web' });
      expect(await store.jobs.cancelForParticipant('participant_1', at(1))).toBe(1);
      expect(await store.jobs.wakeHeld('whatsapp-web', at(2))).toBe(0);
      expect(await store.jobs.get('job_1')).toMatchObject({ status: 'cancelled' });
    });

    it('cancels a held job whose dedup key a newer pending job took meanwhile', async () => {
      const store = current();
      await store.jobs.enqueue(delivery('job_1', { dedupKey: 'key' }), at(0));
      await claimOne(store, 0);
      await store.jobs.enqueue(delivery('job_2', { dedupKey: 'key', runAt: at(10) }), at(1));
      await store.jobs.hold('job_1', { until: at(30), now: at(2) });
      expect(await store.jobs.get('job_1')).toMatchObject({ status: 'cancelled' });
      expect((await store.jobs.getPendingByKey('key'))?.id).toBe('job_2');
    });
  });
}
