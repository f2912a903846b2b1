/**
 * The safety part of the store contract (alerts, their deliveries, staff reviews). Called from
 * `describeStoreContract`, so it runs on every adapter.
 */
import { describe, expect, it } from 'vitest';
import type { NewAlert } from '../../src/store/safety-records.ts';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const BASE = Date.parse('2025-03-01T08:00:00.000Z');
const at = (minutes: number): Date => new Date(BASE + minutes * 60_000 + 123);

function alertFixture(id: string, minutes: number, extra: Partial<NewAlert> = {}): NewAlert {
  return {
    id,
    participantId: 'al_1',
    kind: 'risk',
    detector: 'keywords',
    rule: 'kill myself',
    score: undefined,
    urgency: 'urgent',
    reason: 'a message matched',
    sourceMessageId: `in_${id}`,
    createdAt: at(minutes),
    ...extra,
  };
}

export function describeAlertStoreContract(current: () => Store): void {
  describe('alerts', () => {
    it('records an alert with its routes, lists newest first, and counts the open ones', async () => {
      const store = current();
      await store.participants.create(participantFixture('al_1', '+15550000201', at(0)));
      await store.alerts.create(alertFixture('a1', 1), ['dashboard', 'email', 'webhook']);
      await store.alerts.create(alertFixture('a2', 2, { score: 0.75, detector: 'model', rule: 'self-harm' }), [
        'dashboard',
      ]);
      expect((await store.alerts.list()).map((alert) => alert.id)).toEqual(['a2', 'a1']);
      expect(await store.alerts.countOpen()).toBe(2);
      expect(await store.alerts.get('a2')).toMatchObject({ score: 0.75, status: 'open', createdAt: at(2) });
      expect((await store.alerts.findBySourceMessage('in_a1'))?.id).toBe('a1');
      const deliveries = await store.alerts.deliveries('a1');
      expect(deliveries.map((delivery) => [delivery.route, delivery.status, delivery.attempts])).toEqual([
        ['dashboard', 'delivered', 1],
        ['email', 'pending', 0],
        ['webhook', 'pending', 0],
      ]);
      await store.alerts.recordAttempt('a1', 'email', { status: 'pending', error: 'refused', at: at(3) });
      await store.alerts.recordAttempt('a1', 'email', { status: 'delivered', at: at(4) });
      expect((await store.alerts.deliveries('a1'))[1]).toMatchObject({
        status: 'delivered',
        attempts: 2,
        lastError: undefined,
        deliveredAt: at(4),
      });
      // One alert per message: the source message is unique.
      await expect(store.alerts.create(alertFixture('a3', 3, { sourceMessageId: 'in_a1' }), [])).rejects.toThrow();
    });

    it('acknowledges an open alert once and resolves it once; one unresolved alert per episode', async () => {
      const store = current();
      await store.participants.create(participantFixture('al_1', '+15550000201', at(0)));
      await store.alerts.create(alertFixture('a1', 1, { kind: 'adherence', rule: 'missed' }), ['dashboard']);
      expect((await store.alerts.findUnresolved('al_1', 'adherence', 'missed'))?.id).toBe('a1');
      expect(await store.alerts.acknowledge('a1', 'ada', 'on it', at(2))).toBe(true);
      expect(await store.alerts.acknowledge('a1', 'bob', undefined, at(3))).toBe(false);
      expect(await store.alerts.countOpen()).toBe(0);
      expect(await store.alerts.resolve('a1', 'ada', 'done', at(4))).toBe(true);
      expect(await store.alerts.resolve('a1', 'ada', 'again', at(5))).toBe(false);
      expect(await store.alerts.get('a1')).toMatchObject({
        status: 'resolved',
        acknowledgedBy: 'ada',
        acknowledgeNote: 'on it',
        acknowledgedAt: at(2),
        resolvedBy: 'ada',
        resolveNote: 'done',
      });
      expect(await store.alerts.findUnresolved('al_1', 'adherence', 'missed')).toBeUndefined();
    });

    it('puts a participant under review once, and ends it', async () => {
      const store = current();
      await store.participants.create(participantFixture('al_1', '+15550000201', at(0)));
      await store.alerts.create(alertFixture('a1', 1), ['dashboard']);
      expect(await store.alerts.underReview('al_1')).toBe(false);
      await store.alerts.beginReview('al_1', 'a1', at(1));
      await store.alerts.beginReview('al_1', 'a1', at(2));
      expect(await store.alerts.underReview('al_1')).toBe(true);
      expect(await store.alerts.endReview('al_1')).toBe(true);
      expect(await store.alerts.endReview('al_1')).toBe(false);
      expect(await store.alerts.underReview('al_1')).toBe(false);
    });

    it('takes a conversation over once, moves its last staff message, and ends it', async () => {
      const store = current();
      await store.participants.create(participantFixture('al_1', '+15550000201', at(0)));
      const takeover = { participantId: 'al_1', takenBy: 'ada', startedAt: at(1), timers: 'pause' as const };
      expect(await store.takeovers.begin({ ...takeover, lastStaffMessageAt: at(1) })).toBe(true);
      expect(await store.takeovers.begin({ ...takeover, takenBy: 'bob', lastStaffMessageAt: at(1) })).toBe(false);
      await store.takeovers.staffMessageSent('al_1', at(5));
      expect(await store.takeovers.get('al_1')).toEqual({ ...takeover, lastStaffMessageAt: at(5) });
      expect((await store.takeovers.end('al_1'))?.takenBy).toBe('ada');
      expect(await store.takeovers.end('al_1')).toBeUndefined();
      expect(await store.takeovers.get('al_1')).toBeUndefined();
    });
  });
}
