/**
 * The dashboard part of the store contract (`src/store/ports/roster-reads.ts`): the roster (roster-store-contract.ts),
 * the study-day summary kept by events and transcript entries, the overview's figures and the adherence grid. Called
 * from `describeStoreContract`, so it runs on every adapter.
 */
import { describe, expect, it } from 'vitest';
import type { Participant } from '../../src/domain/participant.ts';
import type { NewTranscriptEntry, Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';
import { describeRosterStoreContract } from './roster-store-contract.ts';

const BASE = Date.parse('2025-03-01T08:00:00.000Z');
/** `minutes` after the base time, with milliseconds so that precision loss would show. */
const at = (minutes: number): Date => new Date(BASE + minutes * 60_000 + 123);
const DAY = 24 * 60;

function enrol(store: Store, id: string, phone: string, overrides: Partial<Participant> = {}): Promise<void> {
  return store.participants.create(participantFixture(id, phone, at(0), overrides));
}

function message(
  participantId: string,
  content: string,
  minutes: number,
  overrides: Partial<NewTranscriptEntry> = {},
): NewTranscriptEntry {
  return { participantId, role: 'user', kind: 'message', content, createdAt: at(minutes), ...overrides };
}

const prompt = (participantId: string, localDate: string, minutes: number) => ({
  participantId,
  type: 'prompt-sent',
  data: { local_date: localDate, prompt: 'Walk after breakfast' },
  createdAt: at(minutes),
});
const done = (participantId: string, minutes: number) => ({
  participantId,
  type: 'poll-answered',
  data: { kind: 'success-counted', successCount: 1, question: 'Did you do it?', option: 'Done' },
  createdAt: at(minutes),
});

export function describeDashboardStoreContract(current: () => Store): void {
  describeRosterStoreContract(current);

  describe('study days', () => {
    it('counts a prompt, the first reply before the next prompt and a Done once; answered never exceeds sent', async () => {
      const db = current();
      await enrol(db, 'ada', '+15550000201');
      await db.events.record(prompt('ada', '2025-03-01', 60));
      // Two messages and two Done answers on day one: one answered day, one Done day.
      await db.transcript.append([message('ada', 'Done', 90)]);
      await db.events.record(done('ada', 90));
      await db.transcript.append([message('ada', 'Done again', 95)]);
      await db.events.record(done('ada', 95));
      // Day two: a reply only. Day three: nothing. A second prompt on day three's date changes nothing.
      await db.events.record(prompt('ada', '2025-03-02', DAY + 60));
      await db.transcript.append([message('ada', 'Next time', DAY + 400)]);
      await db.events.record(prompt('ada', '2025-03-03', 2 * DAY + 60));
      await db.events.record(prompt('ada', '2025-03-03', 2 * DAY + 90));
      // Events of other kinds and of unknown participants change nothing.
      await db.events.record({
        participantId: 'ada',
        type: 'poll-answered',
        data: { kind: 'intensity-kept' },
        createdAt: at(100),
      });
      await db.events.record(prompt('nobody', '2025-03-01', 60));

      const [row] = (await db.roster.page({ limit: 10 })).rows;
      expect(row).toMatchObject({ promptsSent: 3, promptsAnswered: 2, promptsDone: 1 });
      const figures = await db.studyDays.figuresByDate('2025-03-01', '2025-03-03');
      expect(figures).toEqual([
        { localDate: '2025-03-01', promptsSent: 1, promptsAnswered: 1, done: 1, medianReplySeconds: 1800 },
        { localDate: '2025-03-02', promptsSent: 1, promptsAnswered: 1, done: 0, medianReplySeconds: 340 * 60 },
        { localDate: '2025-03-03', promptsSent: 1, promptsAnswered: 0, done: 0, medianReplySeconds: null },
      ]);
    });

    it('takes the median reply time over every participant of a date, the mean of the middle two when even', async () => {
      const db = current();
      for (const [index, minutes] of [10, 20, 40, 80].entries()) {
        const id = `p_${index}`;
        await enrol(db, id, `+1555000030${index}`);
        await db.events.record(prompt(id, '2025-03-01', 0));
        await db.transcript.append([message(id, 'hi', minutes)]);
      }
      const [figures] = await db.studyDays.figuresByDate('2025-03-01', '2025-03-01');
      expect(figures).toMatchObject({ promptsSent: 4, promptsAnswered: 4, medianReplySeconds: 30 * 60 });
    });

    it('counts participants by status and sub-state, and LLM use and failed deliveries by UTC date', async () => {
      const db = current();
      await enrol(db, 'a', '+15550000401');
      await enrol(db, 'b', '+15550000402', { status: 'paused' });
      await db.flowStates.save({
        participantId: 'a',
        flowType: 'conversation',
        currentState: 'CONVERSATION_ACTIVE',
        stateData: { conversationState: 'FEEDBACK' },
        createdAt: at(0),
        updatedAt: at(0),
      });
      expect(await db.studyDays.participantCounts()).toEqual({
        byStatus: { active: 1, paused: 1 },
        bySubState: { FEEDBACK: 1, NONE: 1 },
      });
      const call = (minutes: number, outcome: string, totalTokens: number) =>
        db.llmCalls.record({
          participantId: 'a',
          purpose: 'turn',
          model: 'm',
          providerHost: 'h',
          totalTokens,
          latencyMs: 5,
          outcome,
          createdAt: at(minutes),
        });
      await call(0, 'success', 100);
      await call(10, 'error', 0);
      await call(DAY, 'success', 50);
      const usage = await db.studyDays.usageByUtcDate(
        new Date('2025-03-01T00:00:00Z'),
        new Date('2025-03-03T00:00:00Z'),
      );
      expect(usage).toEqual([
        { date: '2025-03-01', llmCalls: 2, llmErrors: 1, llmTokens: 100, failedDeliveries: 0 },
        { date: '2025-03-02', llmCalls: 1, llmErrors: 0, llmTokens: 50, failedDeliveries: 0 },
      ]);
    });

    it('pages the adherence grid lowest first, by name or by enrolment, with each row’s days and pauses', async () => {
      const db = current();
      const people = [
        { id: 'low', name: 'Zoe', dones: 0 },
        { id: 'mid', name: 'ada', dones: 1 },
        { id: 'top', name: 'Bea', dones: 2 },
      ];
      for (const [index, person] of people.entries()) {
        await enrol(db, person.id, `+1555000050${index}`, { name: person.name, enrolledAt: at(index) });
        for (const day of [0, 1]) {
          await db.events.record(prompt(person.id, `2025-03-0${day + 1}`, day * DAY + 60));
          if (day < person.dones) {
            await db.transcript.append([message(person.id, 'Done', day * DAY + 70)]);
            await db.events.record(done(person.id, day * DAY + 70));
          }
        }
      }
      await enrol(db, 'new', '+15550000599', { name: 'Cy', enrolledAt: at(9) });
      const update = (status: string, from: string, minutes: number) => ({
        participantId: 'low',
        type: 'participant-updated',
        data: { fields: ['status'], status_from: from, status_to: status },
        createdAt: at(minutes),
      });
      await db.events.record(update('paused', 'active', 2 * DAY));
      await db.events.record(update('active', 'paused', 4 * DAY));
      await db.events.record(update('withdrawn', 'active', 5 * DAY));

      const query = { fromDate: '2025-03-01', toDate: '2025-03-07', limit: 2 } as const;
      const first = await db.studyDays.adherencePage({ ...query, sort: 'adherence' });
      expect(first.total).toBe(4);
      expect(first.rows.map((row) => row.participant.id)).toEqual(['low', 'mid']);
      const second = await db.studyDays.adherencePage({
        ...query,
        sort: 'adherence',
        ...(first.next ? { after: first.next } : {}),
      });
      // Without a prompt yet, last.
      expect(second.rows.map((row) => row.participant.id)).toEqual(['top', 'new']);
      expect(second.next).toBeUndefined();
      expect(second.rows[0]).toMatchObject({ promptsSent: 2, promptsAnswered: 2, promptsDone: 2 });
      expect(second.rows[0]?.days.map((day) => [day.localDate, day.answered, day.done])).toEqual([
        ['2025-03-01', true, true],
        ['2025-03-02', true, true],
      ]);
      expect(first.rows[0]?.inactive).toEqual([
        { status: 'paused', from: at(2 * DAY), until: at(4 * DAY) },
        { status: 'withdrawn', from: at(5 * DAY), until: undefined },
      ]);

      const byName = await db.studyDays.adherencePage({ ...query, sort: 'name', limit: 10 });
      expect(byName.rows.map((row) => row.participant.name)).toEqual(['ada', 'Bea', 'Cy', 'Zoe']);
      const newest = await db.studyDays.adherencePage({ ...query, sort: 'enrolled', limit: 3 });
      expect(newest.rows.map((row) => row.participant.id)).toEqual(['new', 'top', 'mid']);
      const oldest = await db.studyDays.adherencePage({
        ...query,
        sort: 'enrolled',
        limit: 3,
        ...(newest.next ? { after: newest.next } : {}),
      });
      expect(oldest.rows.map((row) => row.participant.id)).toEqual(['low']);
      await db.participants.update('low', { status: 'withdrawn', updatedAt: at(5 * DAY) });
      const withdrawn = await db.studyDays.adherencePage({ ...query, sort: 'adherence', status: 'withdrawn' });
      expect(withdrawn.rows.map((row) => row.participant.id)).toEqual(['low']);
      expect(withdrawn.total).toBe(1);
    });

    it('forgets a deleted participant’s days', async () => {
      const db = current();
      await enrol(db, 'gone', '+15550000601');
      await db.events.record(prompt('gone', '2025-03-01', 60));
      await db.participants.delete('gone');
      expect(await db.studyDays.figuresByDate('2025-03-01', '2025-03-01')).toEqual([]);
    });
  });
}
