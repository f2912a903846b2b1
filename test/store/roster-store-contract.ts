/** The roster part of the dashboard's store contract: filters, per-row columns and keyset pages. */
import { describe, expect, it } from 'vitest';
import type { Participant } from '../../src/domain/participant.ts';
import type { RosterFilter } from '../../src/store/ports/roster-reads.ts';
import type { NewTranscriptEntry, Store } from '../../src/store/store.ts';
import { adherenceAlertFixture } from '../support/alert-fixture.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const BASE = Date.parse('2025-03-01T08:00:00.000Z');
/** `minutes` after the base time, with milliseconds so that precision loss would show. */
const at = (minutes: number): Date => new Date(BASE + minutes * 60_000 + 123);

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

export function describeRosterStoreContract(current: () => Store): void {
  describe('roster', () => {
    it('filters by name prefix, phone digits, status, sub-state, idle and channel, with per-row columns', async () => {
      const db = current();
      await enrol(db, 'participant_1', '+15550000001', { name: 'Ada Lovelace' });
      await enrol(db, 'participant_2', '+15550000002', { name: 'Grace', enrolledAt: at(5) });
      await enrol(db, 'participant_3', '+15550000003', { name: 'Linus', status: 'paused', enrolledAt: at(9) });
      await db.flowStates.save({
        participantId: 'participant_1',
        flowType: 'conversation',
        currentState: 'CONVERSATION_ACTIVE',
        stateData: { conversationState: 'INTAKE', userProfile: '{"habit_domain":"walking"}' },
        createdAt: at(0),
        updatedAt: at(1),
      });
      await db.flowStates.save({
        participantId: 'participant_2',
        flowType: 'conversation',
        currentState: 'CONVERSATION_ACTIVE',
        stateData: { conversationState: 'FEEDBACK', engagementState: 'idle' },
        createdAt: at(0),
        updatedAt: at(1),
      });
      await db.transcript.append([
        message('participant_1', 'hello', 1),
        message('participant_1', 'internal', 3, { role: 'tool', kind: 'tool_result' }),
        message('participant_1', 'Walk now', 2, { role: 'assistant', kind: 'reply' }),
      ]);
      await db.jobs.enqueue(
        { id: 'daily_1', kind: 'daily_prompt', participantId: 'participant_1', runAt: at(60), payload: {} },
        at(0),
      );

      const all = await db.roster.page({ limit: 10 });
      expect(all).toMatchObject({ total: 3, hasNewer: false, hasOlder: false });
      expect(all.rows.map((row) => row.participant.id)).toEqual(['participant_3', 'participant_2', 'participant_1']);
      expect(all.rows[2]).toMatchObject({
        conversationState: 'INTAKE',
        idle: false,
        userProfile: '{"habit_domain":"walking"}',
        nextPromptAt: at(60),
        lastMessage: { content: 'Walk now', kind: 'reply', at: at(2) },
        promptsSent: 0,
        promptsAnswered: 0,
        promptsDone: 0,
      });
      expect(all.rows[0]).toMatchObject({ conversationState: undefined, lastMessage: undefined, promptsSent: 0 });

      const ids = async (filter: Omit<RosterFilter, 'limit'>) =>
        (await db.roster.page({ limit: 10, ...filter })).rows.map((row) => row.participant.id);
      expect(await ids({ search: 'GRA' })).toEqual(['participant_2']);
      expect(await ids({ search: 'ada lo' })).toEqual(['participant_1']);
      expect(await ids({ search: 'lovelace' })).toEqual([]);
      expect(await ids({ search: '0003' })).toEqual(['participant_3']);
      expect(await ids({ search: '+1 555-000' })).toEqual(['participant_3', 'participant_2', 'participant_1']);
      expect(await ids({ search: '%' })).toEqual([]);
      expect(await ids({ status: 'paused' })).toEqual(['participant_3']);
      expect(await ids({ subState: 'FEEDBACK' })).toEqual(['participant_2']);
      expect(await ids({ subState: 'NONE' })).toEqual(['participant_3']);
      expect(await ids({ idle: true })).toEqual(['participant_2']);
      expect(await ids({ idle: false })).toEqual(['participant_3', 'participant_1']);
      await enrol(db, 'participant_4', '+15550000004', { name: 'Web', channel: 'webchat', enrolledAt: at(10) });
      expect(await ids({ channel: { name: 'webchat', isDefault: false } })).toEqual(['participant_4']);
      expect(await ids({ channel: { name: 'webhook', isDefault: true } })).toEqual([
        'participant_3',
        'participant_2',
        'participant_1',
      ]);
      expect((await db.roster.page({ limit: 10, search: 'GRA' })).total).toBe(1);

      // Adherence alerts: only unresolved ones, of the rule asked for; the row names the newest.
      const adherenceAlert = (id: string, participantId: string, rule: string, minutes: number) =>
        db.alerts.create(adherenceAlertFixture(id, participantId, rule, at(minutes)), ['dashboard']);
      await adherenceAlert('alert_1', 'participant_1', '2 daily prompts unanswered since 2025-03-01T08:00:00.000Z', 1);
      await adherenceAlert('alert_2', 'participant_1', 'no message for 3 days since 2025-03-01T08:00:00.000Z', 2);
      await adherenceAlert('alert_3', 'participant_2', 'no message for 3 days since 2025-03-01T08:00:00.000Z', 3);
      await db.alerts.resolve('alert_3', 'ada', 'called', at(4));
      expect(await ids({ adherenceAlert: 'any' })).toEqual(['participant_1']);
      expect(await ids({ adherenceAlert: 'missed-prompts' })).toEqual(['participant_1']);
      expect(await ids({ adherenceAlert: 'silent-days', status: 'paused' })).toEqual([]);
      const marked = await db.roster.page({ limit: 10, adherenceAlert: 'silent-days' });
      expect(marked.total).toBe(1);
      expect(marked.rows[0]?.adherenceAlert).toEqual({
        id: 'alert_2',
        rule: 'no message for 3 days since 2025-03-01T08:00:00.000Z',
      });
    });

    it('pages by key: next, previous and last give the same rows as one long page, at any position', async () => {
      const db = current();
      // Two pairs enrolled at the same instant: the id breaks the tie, so no row is skipped or shown twice.
      const enrolled = [0, 1, 1, 2, 3, 3, 4];
      for (const [index, minutes] of enrolled.entries()) {
        await enrol(db, `p_${index}`, `+1555000010${index}`, { enrolledAt: at(minutes) });
      }
      const everyone = (await db.roster.page({ limit: 100 })).rows.map((row) => row.participant.id);
      expect(everyone).toEqual(['p_6', 'p_5', 'p_4', 'p_3', 'p_2', 'p_1', 'p_0']);
      const keyOf = (id: string, pageRows: Awaited<ReturnType<Store['roster']['page']>>['rows']) => {
        const participant = pageRows.find((row) => row.participant.id === id)?.participant;
        if (!participant) throw new Error(`${id} is not on the page`);
        return { enrolledAt: participant.enrolledAt, id };
      };

      const first = await db.roster.page({ limit: 3 });
      expect(first).toMatchObject({ total: 7, hasNewer: false, hasOlder: true });
      const second = await db.roster.page({ limit: 3, position: { after: keyOf('p_4', first.rows) } });
      expect(second.rows.map((row) => row.participant.id)).toEqual(['p_3', 'p_2', 'p_1']);
      expect(second).toMatchObject({ hasNewer: true, hasOlder: true });
      const third = await db.roster.page({ limit: 3, position: { after: keyOf('p_1', second.rows) } });
      expect(third.rows.map((row) => row.participant.id)).toEqual(['p_0']);
      expect(third).toMatchObject({ hasNewer: true, hasOlder: false });
      const back = await db.roster.page({ limit: 3, position: { before: keyOf('p_3', second.rows) } });
      expect(back.rows.map((row) => row.participant.id)).toEqual(['p_6', 'p_5', 'p_4']);
      expect(back).toMatchObject({ hasNewer: false, hasOlder: true });
      const last = await db.roster.page({ limit: 3, position: 'last' });
      expect(last.rows.map((row) => row.participant.id)).toEqual(['p_2', 'p_1', 'p_0']);
      expect(last).toMatchObject({ hasNewer: true, hasOlder: false });
      expect((await db.roster.page({ limit: 3, status: 'paused', position: 'last' })).rows).toEqual([]);
      const skipped = await db.roster.page({ limit: 3, position: { skip: 3 } });
      expect(skipped.rows.map((row) => row.participant.id)).toEqual(['p_3', 'p_2', 'p_1']);
      expect(skipped).toMatchObject({ hasNewer: true, hasOlder: true });
      const past = await db.roster.page({ limit: 3, position: { skip: 30 } });
      expect(past.rows.map((row) => row.participant.id)).toEqual(['p_2', 'p_1', 'p_0']);
    });
  });
}
