/**
 * The store contract: every adapter of `src/store/store.ts` must pass these tests. An adapter's test file calls
 * `describeStoreContract` with a factory that returns a fresh, empty, migrated store for each test.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/domain/errors.ts';
import type { FlowState } from '../../src/domain/flow-state.ts';
import type { Participant } from '../../src/domain/participant.ts';
import type { NewInboundMessage, NewJob, NewTranscriptEntry, Store, TranscriptKind } from '../../src/store/store.ts';
import { describeAlertStoreContract } from './alert-store-contract.ts';
import { describeDashboardStoreContract } from './dashboard-store-contract.ts';
import { describeJobHoldContract } from './job-hold-contract.ts';
import { describeResearchStoreContract } from './research-store-contract.ts';
import { describeTelegramStoreContract } from './telegram-store-contract.ts';
import { describeUnitOfWorkContract } from './unit-of-work-contract.ts';

const BASE_TIME = Date.parse('2025-03-01T08:00:00.000Z');

/** A fixed instant `minutes` after the base time, with milliseconds so that precision loss would show. */
function at(minutes: number): Date {
  return new Date(BASE_TIME + minutes * 60_000 + 123);
}

function makeParticipant(overrides: Partial<Participant> = {}): Participant {
  return {
    id: 'participant_1',
    phoneNumber: '+15550000001',
    name: 'Ada',
    gender: 'female',
    ethnicity: 'n/a',
    background: 'Engineer',
    timezone: 'Europe/London',
    language: 'en',
    channel: '',
    status: 'active',
    enrolledAt: at(0),
    createdAt: at(0),
    updatedAt: at(0),
    ...overrides,
  };
}

function makeFlowState(overrides: Partial<FlowState> = {}): FlowState {
  return {
    participantId: 'participant_1',
    flowType: 'conversation',
    currentState: 'CONVERSATION_ACTIVE',
    stateData: { conversationState: 'INTAKE', userProfile: '{"habit_domain":"walking"}' },
    createdAt: at(0),
    updatedAt: at(1),
    ...overrides,
  };
}

function makeEntry(content: string, overrides: Partial<NewTranscriptEntry> = {}): NewTranscriptEntry {
  return { participantId: 'participant_1', role: 'user', kind: 'message', content, createdAt: at(0), ...overrides };
}

function makeJob(id: string, overrides: Partial<NewJob> = {}): NewJob {
  return { id, kind: 'reminder', runAt: at(0), payload: { id }, ...overrides };
}

function makeInbound(overrides: Partial<NewInboundMessage> = {}): NewInboundMessage {
  return {
    id: 'inbound_1',
    channel: 'whatsapp',
    participantId: 'participant_1',
    providerMessageId: 'wamid.1',
    from: '+15550000001',
    text: 'hello',
    receivedAt: at(0),
    ...overrides,
  };
}

export function describeStoreContract(name: string, makeStore: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
    let store: Store;

    beforeEach(async () => {
      store = await makeStore();
    });

    afterEach(async () => {
      await store.close();
    });

    it('answers ping', async () => {
      await expect(store.ping()).resolves.toBeUndefined();
    });

    describe('participants', () => {
      it('stores a participant and finds it by id and by phone number', async () => {
        const participant = makeParticipant();
        await store.participants.create(participant);
        expect(await store.participants.get(participant.id)).toEqual(participant);
        expect(await store.participants.getByPhone(participant.phoneNumber)).toEqual(participant);
        expect(await store.participants.get('participant_unknown')).toBeUndefined();
        expect(await store.participants.getByPhone('+15559999999')).toBeUndefined();
      });

      it('rejects a duplicate phone number or id with a conflict and keeps the original', async () => {
        await store.participants.create(makeParticipant());
        const duplicatePhone = store.participants.create(makeParticipant({ id: 'participant_2', name: 'Other' }));
        await expect(duplicatePhone).rejects.toBeInstanceOf(AppError);
        await expect(duplicatePhone).rejects.toMatchObject({ code: 'conflict' });
        const duplicateId = store.participants.create(makeParticipant({ phoneNumber: '+15550000002', name: 'Other' }));
        await expect(duplicateId).rejects.toMatchObject({ code: 'conflict' });
        expect(await store.participants.count()).toBe(1);
        expect((await store.participants.get('participant_1'))?.name).toBe('Ada');
        expect(await store.participants.getByPhone('+15550000002')).toBeUndefined();
      });

      it('lets a transaction carry on after a conflict', async () => {
        await store.participants.create(makeParticipant());
        await store.transaction(async (tx) => {
          await expect(tx.participants.create(makeParticipant({ id: 'participant_2' }))).rejects.toMatchObject({
            code: 'conflict',
          });
          await tx.participants.create(makeParticipant({ id: 'participant_3', phoneNumber: '+15550000003' }));
        });
        expect(await store.participants.get('participant_3')).toBeDefined();
      });

      it('lists by enrolment time, oldest first, and filters and counts by status', async () => {
        await store.participants.create(
          makeParticipant({ id: 'p_late', phoneNumber: '+15550000011', enrolledAt: at(90) }),
        );
        await store.participants.create(
          makeParticipant({ id: 'p_early', phoneNumber: '+15550000012', enrolledAt: at(-600), status: 'paused' }),
        );
        await store.participants.create(
          makeParticipant({ id: 'p_middle', phoneNumber: '+15550000013', enrolledAt: at(5) }),
        );
        expect((await store.participants.list()).map((participant) => participant.id)).toEqual([
          'p_early',
          'p_middle',
          'p_late',
        ]);
        expect((await store.participants.list({ status: 'active' })).map((participant) => participant.id)).toEqual([
          'p_middle',
          'p_late',
        ]);
        expect(await store.participants.count()).toBe(3);
        expect(await store.participants.count({ status: 'paused' })).toBe(1);
        expect(await store.participants.count({ status: 'withdrawn' })).toBe(0);
      });

      it('counts the participants who are not withdrawn by channel', async () => {
        const enrolled: [string, string, Participant['status']][] = [
          ['console', '+15550000021', 'active'],
          ['console', '+15550000022', 'paused'],
          ['console', '+15550000023', 'withdrawn'],
          ['webhook', '+15550000024', 'active'],
          ['', '+15550000025', 'completed'],
        ];
        for (const [channel, phoneNumber, status] of enrolled) {
          await store.participants.create(makeParticipant({ id: `p_${phoneNumber}`, phoneNumber, channel, status }));
        }
        expect(Object.fromEntries(await store.participants.countByChannel())).toEqual({
          console: 2,
          webhook: 1,
          '': 1,
        });
      });

      it('updates only the given fields and returns the result', async () => {
        await store.participants.create(makeParticipant());
        const updated = await store.participants.update('participant_1', {
          name: 'Ada L.',
          status: 'paused',
          updatedAt: at(30),
        });
        const expected = makeParticipant({ name: 'Ada L.', status: 'paused', updatedAt: at(30) });
        expect(updated).toEqual(expected);
        expect(await store.participants.get('participant_1')).toEqual(expected);
        expect(
          await store.participants.update('participant_unknown', { name: 'x', updatedAt: at(30) }),
        ).toBeUndefined();
      });

      it('stores the language, defaults it to en when absent, and updates it', async () => {
        await store.participants.create(makeParticipant({ language: 'pt-BR' }));
        expect((await store.participants.get('participant_1'))?.language).toBe('pt-BR');
        const { language: _language, ...withoutLanguage } = makeParticipant({
          id: 'participant_2',
          phoneNumber: '+15550000002',
        });
        await store.participants.create(withoutLanguage);
        expect((await store.participants.get('participant_2'))?.language).toBe('en');
        const updated = await store.participants.update('participant_2', { language: 'es', updatedAt: at(5) });
        expect(updated?.language).toBe('es');
        expect((await store.participants.getByPhone('+15550000002'))?.language).toBe('es');
      });

      it('deletes a participant with its flow state but keeps its transcript', async () => {
        await store.participants.create(makeParticipant());
        await store.flowStates.save(makeFlowState());
        await store.transcript.append([makeEntry('hello')]);
        expect(await store.participants.delete('participant_1')).toBe(true);
        expect(await store.participants.delete('participant_1')).toBe(false);
        expect(await store.participants.get('participant_1')).toBeUndefined();
        expect(await store.flowStates.get('participant_1')).toBeUndefined();
        expect((await store.transcript.list('participant_1')).map((entry) => entry.content)).toEqual(['hello']);
      });
    });

    describe('flow states', () => {
      it('saves, replaces and deletes the whole record', async () => {
        await store.participants.create(makeParticipant());
        expect(await store.flowStates.get('participant_1')).toBeUndefined();
        await store.flowStates.save(makeFlowState());
        expect(await store.flowStates.get('participant_1')).toEqual(makeFlowState());
        const replacement = makeFlowState({ stateData: { conversationState: 'FEEDBACK' }, updatedAt: at(60) });
        await store.flowStates.save(replacement);
        expect(await store.flowStates.get('participant_1')).toEqual(replacement);
        await store.flowStates.delete('participant_1');
        expect(await store.flowStates.get('participant_1')).toBeUndefined();
      });
    });

    describe('working history', () => {
      it('appends numbered messages, reads the newest oldest first, and deletes below a number', async () => {
        await store.participants.create(makeParticipant());
        await store.participants.create(makeParticipant({ id: 'participant_2', phoneNumber: '+15550000002' }));
        expect(await store.history.newest('participant_1')).toBeUndefined();
        expect(await store.history.latest('participant_1', 5)).toEqual([]);
        await store.history.append('participant_1', 1, ['{"n":1}', '{"n":2}', '{"n":3}']);
        await store.history.append('participant_2', 1, ['{"other":true}']);
        await store.history.append('participant_1', 4, ['{"n":4}']);
        expect(await store.history.newest('participant_1')).toEqual({ seq: 4, message: '{"n":4}' });
        expect(await store.history.latest('participant_1', 2)).toEqual([
          { seq: 3, message: '{"n":3}' },
          { seq: 4, message: '{"n":4}' },
        ]);
        expect(await store.history.deleteBefore('participant_1', 3)).toBe(2);
        expect((await store.history.latest('participant_1', 10)).map((row) => row.seq)).toEqual([3, 4]);
        expect(await store.history.latest('participant_2', 10)).toEqual([{ seq: 1, message: '{"other":true}' }]);
      });

      it('refuses a number already taken and stores none of that append', async () => {
        await store.participants.create(makeParticipant());
        await store.history.append('participant_1', 1, ['{"n":1}']);
        await expect(store.history.append('participant_1', 0, ['{"n":0}', '{"again":1}'])).rejects.toThrow();
        expect(await store.history.latest('participant_1', 10)).toEqual([{ seq: 1, message: '{"n":1}' }]);
      });

      it('goes with its participant', async () => {
        await store.participants.create(makeParticipant());
        await store.history.append('participant_1', 1, ['{"n":1}']);
        await store.participants.delete('participant_1');
        expect(await store.history.latest('participant_1', 10)).toEqual([]);
      });
    });

    describe('transcript', () => {
      it('appends in order with increasing ids and keeps every field', async () => {
        const stored = await store.transcript.append([
          makeEntry('what should I do?'),
          makeEntry('', {
            role: 'assistant',
            kind: 'tool_call',
            toolCalls: [{ id: 'call_1', name: 'save_user_profile', arguments: '{"habit_domain": "walking"}' }],
            module: 'INTAKE',
            model: 'test-model',
            sourceMessageId: 'inbound_1',
            createdAt: at(1),
          }),
          makeEntry('{"ok":true}', {
            role: 'tool',
            kind: 'tool_result',
            toolCallId: 'call_1',
            toolName: 'save_user_profile',
          }),
          makeEntry('Walk after lunch.', {
            role: 'assistant',
            kind: 'reply',
            outboundId: 'outbound_1',
            createdAt: at(2),
          }),
        ]);
        expect(stored.map((entry) => entry.content)).toEqual([
          'what should I do?',
          '',
          '{"ok":true}',
          'Walk after lunch.',
        ]);
        const ids = stored.map((entry) => entry.id);
        expect([...ids].sort((left, right) => left - right)).toEqual(ids);
        expect(new Set(ids).size).toBe(4);
        expect(stored[1]?.toolCalls).toEqual([
          { id: 'call_1', name: 'save_user_profile', arguments: '{"habit_domain": "walking"}' },
        ]);
        expect(stored[0]).not.toHaveProperty('toolCalls');
        expect(stored[0]).not.toHaveProperty('module');
        expect(await store.transcript.list('participant_1')).toEqual(stored);
      });

      it('lists one participant only, oldest first', async () => {
        await store.transcript.append([makeEntry('mine 1')]);
        await store.transcript.append([makeEntry('theirs', { participantId: 'participant_2' })]);
        await store.transcript.append([makeEntry('mine 2')]);
        expect((await store.transcript.list('participant_1')).map((entry) => entry.content)).toEqual([
          'mine 1',
          'mine 2',
        ]);
        expect((await store.transcript.list('participant_2')).map((entry) => entry.content)).toEqual(['theirs']);
        expect(await store.transcript.list('participant_3')).toEqual([]);
      });

      it("finds an inbound message's recorded text and reply (not its tool rows), however far back, for that participant only", async () => {
        await store.transcript.append([makeEntry('hello', { sourceMessageId: 'inbound_1' })]);
        // Far more entries after it than any "recent entries" window.
        await store.transcript.append(Array.from({ length: 250 }, (_, index) => makeEntry(`later ${index}`)));
        await store.transcript.append([
          makeEntry('Hello again!', {
            role: 'assistant',
            kind: 'reply',
            sourceMessageId: 'inbound_1',
            outboundId: 'o1',
          }),
          makeEntry('other participant, same id', { participantId: 'participant_2', sourceMessageId: 'inbound_1' }),
          makeEntry('another message', { sourceMessageId: 'inbound_2' }),
        ]);
        const linked = await store.transcript.forSourceMessage('participant_1', 'inbound_1');
        expect(linked.map((entry) => [entry.role, entry.content])).toEqual([
          ['user', 'hello'],
          ['assistant', 'Hello again!'],
        ]);
        expect(linked[0]?.id).toBeLessThan(linked[1]?.id ?? 0);
        expect(await store.transcript.forSourceMessage('participant_1', 'inbound_3')).toEqual([]);
        expect(await store.transcript.forSourceMessage('participant_3', 'inbound_1')).toEqual([]);
      });

      it('lists what was recorded after the participant last wrote, at most the newest `limit` entries', async () => {
        const assistant = (content: string, kind: TranscriptKind = 'reply') =>
          makeEntry(content, { role: 'assistant', kind });
        const contents = (entries: { content: string }[]) => entries.map((entry) => entry.content);
        // Not written yet: every entry counts, newest `limit` of them, oldest first.
        await store.transcript.append([assistant('greeting'), assistant('first poll', 'poll')]);
        expect(contents(await store.transcript.afterLastMessage('participant_1', { limit: 30 }))).toEqual([
          'greeting',
          'first poll',
        ]);
        expect(contents(await store.transcript.afterLastMessage('participant_1', { limit: 1 }))).toEqual([
          'first poll',
        ]);
        await store.transcript.append([
          makeEntry('hello'),
          assistant('reply 1'),
          makeEntry('second message'),
          assistant('', 'tool_call'),
          makeEntry('{"status":"success"}', { role: 'tool', kind: 'tool_result' }),
          assistant('reply 2'),
          assistant('prompt', 'proactive'),
          assistant('done poll', 'poll'),
          makeEntry('other participant', { participantId: 'participant_2' }),
        ]);
        expect(contents(await store.transcript.afterLastMessage('participant_1', { limit: 30 }))).toEqual([
          '',
          '{"status":"success"}',
          'reply 2',
          'prompt',
          'done poll',
        ]);
        expect(contents(await store.transcript.afterLastMessage('participant_1', { limit: 2 }))).toEqual([
          'prompt',
          'done poll',
        ]);
        // Only the participant's own messages count: another participant's message above ends nothing here.
        expect(contents(await store.transcript.afterLastMessage('participant_2', { limit: 30 }))).toEqual([]);
        await store.transcript.append([makeEntry('answer')]);
        expect(await store.transcript.afterLastMessage('participant_1', { limit: 30 })).toEqual([]);
        expect(await store.transcript.afterLastMessage('participant_3', { limit: 30 })).toEqual([]);
        // A turn's three entries after the message, then one more: the message just in reach, then just out of it.
        await store.transcript.append([
          assistant('', 'tool_call'),
          assistant('result', 'tool_result'),
          assistant('hi'),
        ]);
        expect(contents(await store.transcript.afterLastMessage('participant_1', { limit: 30 }))).toEqual([
          '',
          'result',
          'hi',
        ]);
        expect(contents(await store.transcript.afterLastMessage('participant_1', { limit: 3 }))).toEqual([
          '',
          'result',
          'hi',
        ]);
        await store.transcript.append([assistant('poll', 'poll')]);
        expect(contents(await store.transcript.afterLastMessage('participant_1', { limit: 30 }))).toEqual([
          '',
          'result',
          'hi',
          'poll',
        ]);
        expect(contents(await store.transcript.afterLastMessage('participant_1', { limit: 3 }))).toEqual([
          'result',
          'hi',
          'poll',
        ]);
      });

      it('lists the newest entries inside a transaction that appended them, older ones from before it', async () => {
        await store.transcript.append([makeEntry('before 1'), makeEntry('before 2')]);
        const contents = (entries: { content: string }[]) => entries.map((entry) => entry.content);
        const seen = await store.transaction(async (tx) => {
          const [prompt] = await tx.transcript.append([makeEntry('prompt', { role: 'assistant', kind: 'proactive' })]);
          await tx.transcript.append([makeEntry('elsewhere', { participantId: 'participant_2' })]);
          const [poll] = await tx.transcript.append([makeEntry('poll', { role: 'assistant', kind: 'poll' })]);
          const newestTwo = await tx.transcript.list('participant_1', { limit: 2 });
          // What a caller does with what it got changes nothing the next look returns.
          (newestTwo[0] as { content: string }).content = 'changed';
          expect(newestTwo.map((entry) => entry.id)).toEqual([prompt?.id, poll?.id]);
          const lists = {
            one: contents(await tx.transcript.list('participant_1', { limit: 1 })),
            two: contents(await tx.transcript.list('participant_1', { limit: 2 })),
            three: contents(await tx.transcript.list('participant_1', { limit: 3 })),
            other: contents(await tx.transcript.list('participant_2', { limit: 1 })),
          };
          await tx.transcript.purge('participant_1');
          return { ...lists, purged: await tx.transcript.list('participant_1', { limit: 1 }) };
        });
        expect(seen).toEqual({
          one: ['poll'],
          two: ['prompt', 'poll'],
          three: ['before 2', 'prompt', 'poll'],
          other: ['elsewhere'],
          purged: [],
        });
        expect(await store.transcript.list('participant_1', { limit: 5 })).toEqual([]);
      });

      it('pages backwards: the newest `limit` entries before the cursor, oldest first', async () => {
        const stored = await store.transcript.append(
          Array.from({ length: 7 }, (_, index) => makeEntry(`message ${index + 1}`)),
        );
        const contents = (entries: { content: string }[]) => entries.map((entry) => entry.content);
        const lastPage = await store.transcript.list('participant_1', { limit: 3 });
        expect(contents(lastPage)).toEqual(['message 5', 'message 6', 'message 7']);
        const previousPage = await store.transcript.list('participant_1', { limit: 3, before: lastPage[0]!.id });
        expect(contents(previousPage)).toEqual(['message 2', 'message 3', 'message 4']);
        const firstPage = await store.transcript.list('participant_1', { limit: 3, before: previousPage[0]!.id });
        expect(contents(firstPage)).toEqual(['message 1']);
        const beforeFourth = await store.transcript.list('participant_1', { before: stored[3]!.id });
        expect(contents(beforeFourth)).toEqual(['message 1', 'message 2', 'message 3']);
      });

      it('purges one participant and never reuses ids', async () => {
        const [first] = await store.transcript.append([makeEntry('a'), makeEntry('b')]);
        await store.transcript.append([makeEntry('other', { participantId: 'participant_2' })]);
        expect(await store.transcript.purge('participant_1')).toBe(2);
        expect(await store.transcript.list('participant_1')).toEqual([]);
        expect(await store.transcript.list('participant_2')).toHaveLength(1);
        expect(await store.transcript.purge('participant_1')).toBe(0);
        const [afterPurge] = await store.transcript.append([makeEntry('c')]);
        expect(afterPurge?.id).toBeGreaterThan(first?.id ?? Number.POSITIVE_INFINITY);
      });
    });

    describe('events', () => {
      it('records and lists oldest first, filtered by participant and type', async () => {
        await store.events.record({
          participantId: 'participant_1',
          type: 'tool-called',
          data: { tool: 'save_user_profile', nested: { ok: true } },
          sourceMessageId: 'inbound_1',
          createdAt: at(1),
        });
        await store.events.record({ type: 'job-failed', data: { jobId: 'job_1' }, createdAt: at(2) });
        await store.events.record({ participantId: 'participant_2', type: 'tool-called', data: {}, createdAt: at(3) });

        const all = await store.events.list();
        expect(all.map((event) => event.type)).toEqual(['tool-called', 'job-failed', 'tool-called']);
        expect(all[0]).toMatchObject({
          participantId: 'participant_1',
          data: { tool: 'save_user_profile', nested: { ok: true } },
          sourceMessageId: 'inbound_1',
          createdAt: at(1),
        });
        expect(all[1]).not.toHaveProperty('participantId');
        expect((all[1]?.id ?? 0) > (all[0]?.id ?? 0)).toBe(true);
        expect((await store.events.list({ participantId: 'participant_1' })).map((event) => event.createdAt)).toEqual([
          at(1),
        ]);
        expect((await store.events.list({ type: 'tool-called' })).map((event) => event.participantId)).toEqual([
          'participant_1',
          'participant_2',
        ]);
        expect((await store.events.list({ limit: 2 })).map((event) => event.createdAt)).toEqual([at(2), at(3)]);
      });
    });

    describe('jobs', () => {
      it('enqueues a pending job with defaults', async () => {
        const job = await store.jobs.enqueue(makeJob('job_1', { participantId: 'participant_1' }), at(-5));
        const expected = {
          id: 'job_1',
          kind: 'reminder',
          participantId: 'participant_1',
          runAt: at(0),
          payload: { id: 'job_1' },
          status: 'pending',
          attempts: 0,
          maxAttempts: 3,
          lastError: undefined,
          leaseOwner: undefined,
          leaseUntil: undefined,
          dedupKey: undefined,
          createdAt: at(-5),
          updatedAt: at(-5),
        };
        expect(job).toEqual(expected);
        expect(await store.jobs.get('job_1')).toEqual(expected);
        expect((await store.jobs.enqueue(makeJob('job_2', { maxAttempts: 7 }), at(0))).maxAttempts).toBe(7);
        expect(await store.jobs.get('job_unknown')).toBeUndefined();
      });

      it('replaces the pending job holding the same dedup key', async () => {
        await store.jobs.enqueue(makeJob('job_1', { dedupKey: 'reminder:participant_1', runAt: at(10) }), at(0));
        const replacement = await store.jobs.enqueue(
          makeJob('job_2', { dedupKey: 'reminder:participant_1', runAt: at(20) }),
          at(1),
        );
        expect(replacement.status).toBe('pending');
        expect(await store.jobs.get('job_1')).toMatchObject({ status: 'cancelled', updatedAt: at(1) });
        expect((await store.jobs.getPendingByKey('reminder:participant_1'))?.id).toBe('job_2');
        expect((await store.jobs.listPending()).map((job) => job.id)).toEqual(['job_2']);
      });

      it('leaves the replaced job pending when the replacement cannot be inserted', async () => {
        await store.jobs.enqueue(makeJob('job_1'), at(0));
        await store.jobs.enqueue(makeJob('job_2', { dedupKey: 'key' }), at(0));
        // Same id as job_1: the insert fails after the cancel, which must be undone with it.
        await expect(store.jobs.enqueue(makeJob('job_1', { dedupKey: 'key' }), at(1))).rejects.toThrow();
        expect(await store.jobs.get('job_2')).toMatchObject({ status: 'pending' });
        expect((await store.jobs.getPendingByKey('key'))?.id).toBe('job_2');
      });

      it('cancels by key, by id and by participant, only pending jobs', async () => {
        await store.jobs.enqueue(makeJob('job_key', { dedupKey: 'key' }), at(0));
        await store.jobs.enqueue(makeJob('job_id'), at(0));
        await store.jobs.enqueue(makeJob('job_p1', { participantId: 'participant_1' }), at(0));
        await store.jobs.enqueue(makeJob('job_p2', { participantId: 'participant_1', runAt: at(60) }), at(0));
        await store.jobs.enqueue(makeJob('job_other', { participantId: 'participant_2' }), at(0));

        expect(await store.jobs.cancelByKey('key', at(1))).toBe(1);
        expect(await store.jobs.cancelByKey('key', at(1))).toBe(0);
        expect(await store.jobs.getPendingByKey('key')).toBeUndefined();
        expect(await store.jobs.cancelById('job_id', at(1))).toBe(true);
        expect(await store.jobs.cancelById('job_id', at(1))).toBe(false);
        expect(await store.jobs.cancelById('job_unknown', at(1))).toBe(false);
        expect(await store.jobs.cancelForParticipant('participant_1', at(1))).toBe(2);
        expect((await store.jobs.listPending()).map((job) => job.id)).toEqual(['job_other']);
        expect(await store.jobs.get('job_p2')).toMatchObject({ status: 'cancelled', updatedAt: at(1) });

        const [claimed] = await store.jobs.claimDue({ now: at(1), owner: 'worker', leaseMs: 60_000, limit: 10 });
        expect(claimed?.id).toBe('job_other');
        expect(await store.jobs.cancelById('job_other', at(1))).toBe(false);
        expect(await store.jobs.cancelForParticipant('participant_2', at(1))).toBe(0);
        expect(await store.jobs.get('job_other')).toMatchObject({ status: 'running' });
      });

      it('claims due jobs oldest run_at first, then in enqueue order, up to the limit', async () => {
        await store.jobs.enqueue(makeJob('job_later', { runAt: at(5) }), at(0));
        await store.jobs.enqueue(makeJob('job_same_b', { runAt: at(3) }), at(0));
        await store.jobs.enqueue(makeJob('job_same_a', { runAt: at(3) }), at(0));
        await store.jobs.enqueue(makeJob('job_first', { runAt: at(-60) }), at(0));
        await store.jobs.enqueue(makeJob('job_future', { runAt: new Date(at(5).getTime() + 1) }), at(0));

        const claimed = await store.jobs.claimDue({ now: at(5), owner: 'worker_a', leaseMs: 30_000, limit: 3 });
        expect(claimed.map((job) => job.id)).toEqual(['job_first', 'job_same_b', 'job_same_a']);
        for (const job of claimed) {
          expect(job).toMatchObject({
            status: 'running',
            attempts: 1,
            leaseOwner: 'worker_a',
            leaseUntil: new Date(at(5).getTime() + 30_000),
            updatedAt: at(5),
          });
          expect(await store.jobs.get(job.id)).toEqual(job);
        }
        const rest = await store.jobs.claimDue({ now: at(5), owner: 'worker_a', leaseMs: 30_000, limit: 10 });
        expect(rest.map((job) => job.id)).toEqual(['job_later']);
        expect(await store.jobs.claimDue({ now: at(5), owner: 'worker_a', leaseMs: 30_000, limit: 10 })).toEqual([]);
      });

      it('merges pending and lease-expired jobs in one claim order, up to the limit', async () => {
        await store.jobs.enqueue(makeJob('job_crashed', { runAt: at(1) }), at(0));
        await store.jobs.enqueue(makeJob('job_due_early', { runAt: at(0) }), at(0));
        await store.jobs.enqueue(makeJob('job_due_late', { runAt: at(2) }), at(0));
        // job_crashed (run_at 1) and job_due_early (run_at 0) are claimed by an owner that dies; only job_crashed's
        // lease runs out before the next claim.
        const first = await store.jobs.claimDue({ now: at(1), owner: 'dead', leaseMs: 1000, limit: 1 });
        expect(first.map((job) => job.id)).toEqual(['job_due_early']);
        await store.jobs.complete('job_due_early', at(1));
        await store.jobs.claimDue({ now: at(1), owner: 'dead', leaseMs: 1000, limit: 1 });
        expect(await store.jobs.get('job_crashed')).toMatchObject({ status: 'running', leaseOwner: 'dead' });
        await store.jobs.enqueue(makeJob('job_due_first', { runAt: at(0.5) }), at(0));

        const claimed = await store.jobs.claimDue({ now: at(3), owner: 'alive', leaseMs: 1000, limit: 2 });
        // Claim order is run_at whatever the status: 0.5 (pending), 1 (expired lease), then 2 (pending) next time.
        expect(claimed.map((job) => job.id)).toEqual(['job_due_first', 'job_crashed']);
        expect(claimed[1]).toMatchObject({ attempts: 2, leaseOwner: 'alive' });
        const rest = await store.jobs.claimDue({ now: at(3), owner: 'alive', leaseMs: 1000, limit: 2 });
        expect(rest.map((job) => job.id)).toEqual(['job_due_late']);
      });

      it('claims only the requested kinds', async () => {
        await store.jobs.enqueue(makeJob('job_reminder'), at(0));
        await store.jobs.enqueue(makeJob('job_prompt', { kind: 'daily-prompt' }), at(0));
        await store.jobs.enqueue(makeJob('job_delivery', { kind: 'delivery' }), at(0));
        const claimed = await store.jobs.claimDue({
          now: at(1),
          owner: 'worker',
          leaseMs: 1000,
          limit: 10,
          kinds: ['daily-prompt', 'delivery'],
        });
        expect(claimed.map((job) => job.id).sort()).toEqual(['job_delivery', 'job_prompt']);
        expect(await store.jobs.claimDue({ now: at(1), owner: 'worker', leaseMs: 1000, limit: 10, kinds: [] })).toEqual(
          [],
        );
        expect((await store.jobs.listPending({ kind: 'reminder' }))[0]?.status).toBe('pending');
      });

      it('takes a running job back once its lease has expired, not before', async () => {
        await store.jobs.enqueue(makeJob('job_1'), at(0));
        const [first] = await store.jobs.claimDue({ now: at(0), owner: 'worker_a', leaseMs: 60_000, limit: 1 });
        expect(first?.leaseUntil).toEqual(at(1));
        expect(await store.jobs.claimDue({ now: at(0.5), owner: 'worker_b', leaseMs: 60_000, limit: 1 })).toEqual([]);
        // The lease is held up to and including its last instant.
        expect(await store.jobs.claimDue({ now: at(1), owner: 'worker_b', leaseMs: 60_000, limit: 1 })).toEqual([]);
        const later = new Date(at(1).getTime() + 1);
        const [retaken] = await store.jobs.claimDue({ now: later, owner: 'worker_b', leaseMs: 60_000, limit: 1 });
        expect(retaken).toMatchObject({
          id: 'job_1',
          status: 'running',
          attempts: 2,
          leaseOwner: 'worker_b',
          leaseUntil: new Date(later.getTime() + 60_000),
        });
      });

      it('renews the leases of the jobs an owner is still running, and only those', async () => {
        await store.jobs.enqueue(makeJob('job_a'), at(0));
        await store.jobs.enqueue(makeJob('job_b'), at(0));
        await store.jobs.enqueue(makeJob('job_c'), at(0));
        await store.jobs.claimDue({ now: at(0), owner: 'runner_1', leaseMs: 60_000, limit: 2 });
        await store.jobs.claimDue({ now: at(0), owner: 'runner_2', leaseMs: 60_000, limit: 1 });
        await store.jobs.complete('job_b', at(1));
        const renewed = await store.jobs.renewLeases({
          ids: ['job_a', 'job_b', 'job_c'],
          owner: 'runner_1',
          leaseUntil: at(120),
          now: at(2),
        });
        expect(renewed).toBe(1);
        expect((await store.jobs.get('job_a'))?.leaseUntil).toEqual(at(120));
        expect((await store.jobs.get('job_c'))?.leaseOwner).toBe('runner_2');
        expect((await store.jobs.get('job_c'))?.leaseUntil).not.toEqual(at(120));
        // A renewed lease is not taken back when the original one would have expired.
        expect(await store.jobs.claimDue({ now: at(90), owner: 'runner_3', leaseMs: 60_000, limit: 10 })).toEqual([
          expect.objectContaining({ id: 'job_c' }),
        ]);
        expect(await store.jobs.renewLeases({ ids: [], owner: 'runner_1', leaseUntil: at(200), now: at(3) })).toBe(0);
      });

      it('claims ordered kinds one at a time per participant, in enqueue order', async () => {
        const ordered = { orderedKinds: ['deliver'] };
        await store.jobs.enqueue(makeJob('first', { kind: 'deliver', participantId: 'participant_1' }), at(0));
        await store.jobs.enqueue(makeJob('second', { kind: 'deliver', participantId: 'participant_1' }), at(0));
        await store.jobs.enqueue(makeJob('other', { kind: 'deliver', participantId: 'participant_2' }), at(0));
        await store.jobs.enqueue(makeJob('unordered', { kind: 'reminder', participantId: 'participant_1' }), at(0));
        const claimed = await store.jobs.claimDue({ now: at(0), owner: 'a', leaseMs: 60_000, limit: 10, ...ordered });
        expect(claimed.map((job) => job.id)).toEqual(['first', 'other', 'unordered']);
        // While the first runs (under a valid lease), nobody takes the second.
        expect(await store.jobs.claimDue({ now: at(0), owner: 'b', leaseMs: 60_000, limit: 10, ...ordered })).toEqual(
          [],
        );
        await store.jobs.complete('first', at(0));
        const next = await store.jobs.claimDue({ now: at(0), owner: 'b', leaseMs: 60_000, limit: 10, ...ordered });
        expect(next.map((job) => job.id)).toEqual(['second']);
        // Without the option, kinds are not ordered.
        await store.jobs.enqueue(makeJob('third', { kind: 'deliver', participantId: 'participant_1' }), at(0));
        expect(
          (await store.jobs.claimDue({ now: at(0), owner: 'c', leaseMs: 60_000, limit: 10 })).map((job) => job.id),
        ).toEqual(['third']);
      });

      it('releases every running lease at once (start-up after a crash), giving the interrupted attempt back', async () => {
        await store.jobs.enqueue(makeJob('job_1'), at(0));
        await store.jobs.enqueue(makeJob('job_2'), at(0));
        await store.jobs.enqueue(makeJob('job_3', { runAt: at(10) }), at(0));
        await store.jobs.claimDue({ now: at(0), owner: 'crashed', leaseMs: 600_000, limit: 1 });
        await store.jobs.complete('job_1', at(0.1));
        await store.jobs.claimDue({ now: at(0.2), owner: 'crashed', leaseMs: 600_000, limit: 1 });
        expect(await store.jobs.releaseLeases(at(0.5))).toBe(1);
        expect(await store.jobs.get('job_2')).toMatchObject({ status: 'pending', attempts: 0, leaseOwner: undefined });
        expect((await store.jobs.get('job_1'))?.status).toBe('completed');
        expect((await store.jobs.get('job_3'))?.status).toBe('pending');
        const [again] = await store.jobs.claimDue({ now: at(0.5), owner: 'restarted', leaseMs: 1000, limit: 5 });
        expect(again).toMatchObject({ id: 'job_2', attempts: 1, leaseOwner: 'restarted' });
        expect(await store.jobs.releaseLeases(at(0.6))).toBe(1);
        expect(await store.jobs.releaseLeases(at(0.7))).toBe(0);
        // Restarts in a row, each killing the run: the job never runs out of attempts (a reply is never given up).
        for (let restart = 0; restart < 20; restart += 1) {
          const [claimed] = await store.jobs.claimDue({
            now: at(1 + restart),
            owner: `p${restart}`,
            leaseMs: 1000,
            limit: 5,
          });
          expect(claimed).toMatchObject({ id: 'job_2', attempts: 1 });
          await store.jobs.releaseLeases(at(1.5 + restart));
        }
      });

      it('completes a running job, which is then never claimed again', async () => {
        await store.jobs.enqueue(makeJob('job_1'), at(0));
        await store.jobs.claimDue({ now: at(0), owner: 'worker', leaseMs: 1000, limit: 1 });
        await store.jobs.complete('job_1', at(0.1));
        expect(await store.jobs.get('job_1')).toMatchObject({ status: 'completed', attempts: 1, updatedAt: at(0.1) });
        expect(await store.jobs.claimDue({ now: at(600), owner: 'worker', leaseMs: 1000, limit: 1 })).toEqual([]);
        expect(await store.jobs.listPending()).toEqual([]);
        expect(await store.jobs.nextDueAt()).toBeUndefined();
      });

      it('fails with a retry time back to pending, and without one to failed, keeping the error', async () => {
        await store.jobs.enqueue(makeJob('job_1'), at(0));
        await store.jobs.claimDue({ now: at(0), owner: 'worker', leaseMs: 60_000, limit: 1 });
        await store.jobs.fail('job_1', 'channel timeout', at(0.2), at(10));
        expect(await store.jobs.get('job_1')).toMatchObject({
          status: 'pending',
          runAt: at(10),
          attempts: 1,
          lastError: 'channel timeout',
          leaseUntil: undefined,
        });
        expect(await store.jobs.claimDue({ now: at(9), owner: 'worker', leaseMs: 60_000, limit: 1 })).toEqual([]);
        const [retry] = await store.jobs.claimDue({ now: at(10), owner: 'worker', leaseMs: 60_000, limit: 1 });
        expect(retry).toMatchObject({ id: 'job_1', attempts: 2, lastError: 'channel timeout' });

        await store.jobs.fail('job_1', 'still broken', at(10.5));
        expect(await store.jobs.get('job_1')).toMatchObject({
          status: 'failed',
          attempts: 2,
          lastError: 'still broken',
          updatedAt: at(10.5),
        });
        expect(await store.jobs.claimDue({ now: at(600), owner: 'worker', leaseMs: 60_000, limit: 1 })).toEqual([]);
        expect(await store.jobs.nextDueAt()).toBeUndefined();
      });

      it('cancels a failing job instead of retrying it when a replacement holds its dedup key', async () => {
        await store.jobs.enqueue(makeJob('job_1', { dedupKey: 'key' }), at(0));
        await store.jobs.claimDue({ now: at(0), owner: 'worker', leaseMs: 60_000, limit: 1 });
        await store.jobs.enqueue(makeJob('job_2', { dedupKey: 'key', runAt: at(30) }), at(0.1));
        await store.jobs.fail('job_1', 'boom', at(0.2), at(5));
        expect(await store.jobs.get('job_1')).toMatchObject({ status: 'cancelled', lastError: 'boom' });
        expect((await store.jobs.getPendingByKey('key'))?.id).toBe('job_2');
      });

      it('reports the next instant something becomes claimable', async () => {
        expect(await store.jobs.nextDueAt()).toBeUndefined();
        await store.jobs.enqueue(makeJob('job_late', { runAt: at(30) }), at(0));
        await store.jobs.enqueue(makeJob('job_cancelled', { runAt: at(1) }), at(0));
        await store.jobs.cancelById('job_cancelled', at(0));
        expect(await store.jobs.nextDueAt()).toEqual(at(30));
        await store.jobs.enqueue(makeJob('job_running', { runAt: at(-10) }), at(0));
        await store.jobs.claimDue({ now: at(0), owner: 'worker', leaseMs: 5 * 60_000, limit: 1 });
        expect(await store.jobs.nextDueAt()).toEqual(at(5));
        await store.jobs.enqueue(makeJob('job_soon', { runAt: at(2) }), at(0));
        expect(await store.jobs.nextDueAt()).toEqual(at(2));
      });

      it('lists pending and running jobs by run_at, filtered by participant and kind', async () => {
        await store.jobs.enqueue(makeJob('job_b', { participantId: 'participant_1', runAt: at(20) }), at(0));
        await store.jobs.enqueue(makeJob('job_a', { participantId: 'participant_1', runAt: at(-1) }), at(0));
        await store.jobs.enqueue(makeJob('job_c', { participantId: 'participant_2', kind: 'delivery' }), at(0));
        await store.jobs.enqueue(makeJob('job_done', { participantId: 'participant_1', runAt: at(-2) }), at(0));
        await store.jobs.claimDue({ now: at(0), owner: 'worker', leaseMs: 1000, limit: 2 });
        await store.jobs.complete('job_done', at(0));

        expect(await store.jobs.get('job_a')).toMatchObject({ status: 'running' });
        expect((await store.jobs.listPending()).map((job) => job.id)).toEqual(['job_a', 'job_c', 'job_b']);
        expect((await store.jobs.listPending({ participantId: 'participant_1' })).map((job) => job.id)).toEqual([
          'job_a',
          'job_b',
        ]);
        expect((await store.jobs.listPending({ kind: 'delivery' })).map((job) => job.id)).toEqual(['job_c']);
      });

      it('lists jobs due at the same instant in enqueue order, whether pending or running', async () => {
        await store.jobs.enqueue(makeJob('job_1', { kind: 'a', runAt: at(-1) }), at(0));
        await store.jobs.enqueue(makeJob('job_2', { kind: 'b', runAt: at(-1) }), at(0));
        await store.jobs.enqueue(makeJob('job_3', { kind: 'a', runAt: at(-1) }), at(0));
        await store.jobs.claimDue({ now: at(0), owner: 'worker', leaseMs: 1000, limit: 5, kinds: ['b'] });

        const listed = await store.jobs.listPending();
        expect(listed.map((job) => [job.id, job.status])).toEqual([
          ['job_1', 'pending'],
          ['job_2', 'running'],
          ['job_3', 'pending'],
        ]);
      });

      it('creates a job already claimed when asked, only where a claim would take it now', async () => {
        const claimFor = { owner: 'runner_a', leaseMs: 60_000 };
        const enqueued = async (id: string, overrides: Partial<NewJob> = {}) =>
          store.jobs.enqueue(makeJob(id, { kind: 'delivery', participantId: 'participant_1', ...overrides }), at(0), {
            claimFor,
          });

        const first = await enqueued('job_first');
        expect(first).toMatchObject({ status: 'running', attempts: 1, leaseOwner: 'runner_a' });
        expect(first.leaseUntil?.toISOString()).toBe(new Date(at(0).getTime() + 60_000).toISOString());
        expect(await store.jobs.get('job_first')).toEqual(first);
        // Already its runner's: no claim takes it while the lease holds.
        expect(await store.jobs.claimDue({ now: at(0), owner: 'runner_b', leaseMs: 1000, limit: 10 })).toEqual([]);

        // Behind a running one of the same kind and participant: queued, to keep their order.
        expect(await enqueued('job_second')).toMatchObject({ status: 'pending', attempts: 0, leaseOwner: undefined });
        // Another participant's, or another kind's, is not held back by it.
        expect((await enqueued('job_other', { participantId: 'participant_2' })).status).toBe('running');
        expect((await enqueued('job_kind', { kind: 'reminder' })).status).toBe('running');
        // Not due yet, or holding a dedup key: queued as usual.
        expect((await enqueued('job_later', { participantId: 'participant_3', runAt: at(5) })).status).toBe('pending');
        expect((await enqueued('job_keyed', { participantId: 'participant_4', dedupKey: 'k' })).status).toBe('pending');

        await store.jobs.complete('job_first', at(0));
        // Behind a pending one that is due: queued too.
        expect((await enqueued('job_third')).status).toBe('pending');
        const claimed = await store.jobs.claimDue({
          now: at(0),
          owner: 'runner_a',
          leaseMs: 1000,
          limit: 10,
          orderedKinds: ['delivery'],
        });
        expect(claimed.map((job) => job.id)).toEqual(['job_second', 'job_keyed']);
      });

      it('never hands the same job to concurrent claimers', async () => {
        const total = 24;
        for (let index = 0; index < total; index += 1) {
          await store.jobs.enqueue(makeJob(`job_${String(index).padStart(2, '0')}`, { runAt: at(-index) }), at(-60));
        }
        const claims = await Promise.all(
          ['worker_a', 'worker_b', 'worker_c', 'worker_d'].map((owner) =>
            store.jobs.claimDue({ now: at(0), owner, leaseMs: 60_000, limit: 5 }),
          ),
        );
        const concurrentIds = claims.flat().map((job) => job.id);
        expect(new Set(concurrentIds).size).toBe(concurrentIds.length);
        expect(concurrentIds.length).toBeGreaterThan(0);

        const leftovers = await store.jobs.claimDue({ now: at(0), owner: 'worker_e', leaseMs: 60_000, limit: total });
        const allIds = [...concurrentIds, ...leftovers.map((job) => job.id)];
        expect(new Set(allIds).size).toBe(total);
        expect(allIds).toHaveLength(total);
        for (const [index, claim] of claims.entries()) {
          for (const job of claim) {
            expect(await store.jobs.get(job.id)).toMatchObject({ attempts: 1, leaseOwner: `worker_${'abcd'[index]}` });
          }
        }
      });
    });

    describe('transactions', () => {
      it('commits the writes of every repository together', async () => {
        const result = await store.transaction(async (tx) => {
          await tx.participants.create(makeParticipant());
          await tx.flowStates.save(makeFlowState());
          await tx.transcript.append([makeEntry('hello')]);
          await tx.events.record({
            participantId: 'participant_1',
            type: 'participant-enrolled',
            data: {},
            createdAt: at(0),
          });
          await tx.jobs.enqueue(makeJob('job_1', { dedupKey: 'key' }), at(0));
          await tx.inbound.record(makeInbound());
          // Reads inside the transaction see its own writes.
          expect(await tx.participants.get('participant_1')).toBeDefined();
          return 'done';
        });
        expect(result).toBe('done');
        expect(await store.participants.get('participant_1')).toBeDefined();
        expect(await store.flowStates.get('participant_1')).toBeDefined();
        expect(await store.transcript.list('participant_1')).toHaveLength(1);
        expect(await store.events.list()).toHaveLength(1);
        expect(await store.jobs.get('job_1')).toBeDefined();
        expect(await store.inbound.get('inbound_1')).toBeDefined();
      });

      it('writes nothing when the function throws, and rethrows its error', async () => {
        await store.jobs.enqueue(makeJob('job_old', { dedupKey: 'key' }), at(0));
        const failure = new Error('turn failed');
        await expect(
          store.transaction(async (tx) => {
            await tx.participants.create(makeParticipant());
            await tx.flowStates.save(makeFlowState());
            await tx.transcript.append([
              makeEntry('hello'),
              makeEntry('hi there', { role: 'assistant', kind: 'reply' }),
            ]);
            await tx.events.record({ type: 'tool-called', data: {}, createdAt: at(0) });
            await tx.jobs.enqueue(makeJob('job_new', { dedupKey: 'key' }), at(0));
            await tx.inbound.record(makeInbound());
            throw failure;
          }),
        ).rejects.toBe(failure);
        expect(await store.participants.count()).toBe(0);
        expect(await store.flowStates.get('participant_1')).toBeUndefined();
        expect(await store.transcript.list('participant_1')).toEqual([]);
        expect(await store.events.list()).toEqual([]);
        expect(await store.jobs.get('job_new')).toBeUndefined();
        expect(await store.jobs.get('job_old')).toMatchObject({ status: 'pending' });
        expect(await store.inbound.get('inbound_1')).toBeUndefined();
      });

      it('joins a nested transaction to the outer one', async () => {
        const nested = async (repositories: object, content: string): Promise<string> => {
          // Code written against `Store` may be handed the transaction's repositories.
          expect(repositories).toHaveProperty('transaction');
          const asStore = repositories as Store;
          return asStore.transaction(async (inner) => {
            await inner.transcript.append([makeEntry(content)]);
            return content;
          });
        };

        await expect(
          store.transaction(async (tx) => {
            await nested(tx, 'rolled back');
            // The nested call has returned; the outer transaction must still be able to undo its write.
            throw new Error('outer failed');
          }),
        ).rejects.toThrow('outer failed');
        expect(await store.transcript.list('participant_1')).toEqual([]);

        const returned = await store.transaction(async (tx) => {
          const inner = await nested(tx, 'committed');
          // Visible inside the outer transaction before it commits: same connection, same transaction.
          expect((await tx.transcript.list('participant_1')).map((entry) => entry.content)).toEqual(['committed']);
          return inner;
        });
        expect(returned).toBe('committed');
        expect((await store.transcript.list('participant_1')).map((entry) => entry.content)).toEqual(['committed']);
      });

      it('runs after-commit callbacks after the outermost commit, at once outside one, never after a rollback', async () => {
        const calls: string[] = [];
        store.afterCommit(() => calls.push('outside'));
        expect(calls).toEqual(['outside']);

        await store.transaction(async (tx) => {
          await tx.transcript.append([makeEntry('kept')]);
          tx.afterCommit(() => calls.push('outer'));
          await tx.transaction(async (inner) => {
            inner.afterCommit(() => calls.push('nested'));
          });
          expect(calls).toEqual(['outside']);
        });
        expect(calls).toEqual(['outside', 'outer', 'nested']);

        await expect(
          store.transaction(async (tx) => {
            tx.afterCommit(() => calls.push('rolled back'));
            throw new Error('outer failed');
          }),
        ).rejects.toThrow('outer failed');
        expect(calls).toEqual(['outside', 'outer', 'nested']);
        // Each commit runs its own callbacks, once.
        await store.transaction(async (tx) => {
          await tx.transcript.append([makeEntry('second')]);
          tx.afterCommit(() => calls.push(`seen ${calls.length}`));
        });
        expect(calls.at(-1)).toBe('seen 3');
        expect(await store.transcript.list('participant_1')).toHaveLength(2);
      });

      it('runs a job enqueue inside the caller’s transaction', async () => {
        await store.jobs.enqueue(makeJob('job_old', { dedupKey: 'key' }), at(0));
        await expect(
          store.transaction(async (tx) => {
            await tx.jobs.enqueue(makeJob('job_new', { dedupKey: 'key' }), at(1));
            expect((await tx.jobs.getPendingByKey('key'))?.id).toBe('job_new');
            throw new Error('abort');
          }),
        ).rejects.toThrow('abort');
        expect((await store.jobs.getPendingByKey('key'))?.id).toBe('job_old');
      });
    });

    describe('the ambient unit of work', () => {
      describeUnitOfWorkContract(() => store);
    });

    describe('inbound messages', () => {
      it('records a message once per (channel, provider message id)', async () => {
        const first = await store.inbound.record(
          makeInbound({ pollAnswer: { pollId: 'poll_1', question: 'Did you do it?', option: 'Done' } }),
        );
        expect(first.duplicate).toBe(false);
        expect(first.message).toEqual({
          ...makeInbound({ pollAnswer: { pollId: 'poll_1', question: 'Did you do it?', option: 'Done' } }),
          status: 'received',
          processedAt: undefined,
          lastError: undefined,
        });
        await store.inbound.markProcessed('inbound_1', at(1));

        const again = await store.inbound.record(
          makeInbound({ id: 'inbound_2', text: 'hello again', receivedAt: at(2) }),
        );
        expect(again.duplicate).toBe(true);
        expect(again.message).toMatchObject({
          id: 'inbound_1',
          text: 'hello',
          status: 'processed',
          processedAt: at(1),
        });
        expect(await store.inbound.get('inbound_2')).toBeUndefined();
        expect(await store.inbound.get('inbound_1')).toEqual(again.message);

        const otherChannel = await store.inbound.record(makeInbound({ id: 'inbound_3', channel: 'twilio' }));
        expect(otherChannel.duplicate).toBe(false);
      });

      it('never deduplicates messages without a provider id', async () => {
        const { providerMessageId: _omitted, ...withoutProviderId } = makeInbound();
        const first = await store.inbound.record(withoutProviderId);
        const second = await store.inbound.record({ ...withoutProviderId, id: 'inbound_2' });
        expect([first.duplicate, second.duplicate]).toEqual([false, false]);
        expect(first.message).not.toHaveProperty('providerMessageId');
        expect(first.message).not.toHaveProperty('pollAnswer');
        expect(await store.inbound.get('inbound_2')).toMatchObject({ id: 'inbound_2', status: 'received' });
      });

      it('tracks processing and lists the unprocessed oldest first', async () => {
        await store.inbound.record(makeInbound({ id: 'inbound_late', providerMessageId: 'p3', receivedAt: at(3) }));
        await store.inbound.record(makeInbound({ id: 'inbound_early', providerMessageId: 'p1', receivedAt: at(1) }));
        await store.inbound.record(makeInbound({ id: 'inbound_done', providerMessageId: 'p0', receivedAt: at(0) }));
        await store.inbound.record(makeInbound({ id: 'inbound_failed', providerMessageId: 'p2', receivedAt: at(2) }));
        await store.inbound.markProcessed('inbound_done', at(4));
        await store.inbound.markFailed('inbound_failed', 'llm unavailable', at(5));

        expect((await store.inbound.listUnprocessed()).map((message) => message.id)).toEqual([
          'inbound_early',
          'inbound_late',
        ]);
        await store.inbound.record(
          makeInbound({
            id: 'inbound_other',
            participantId: 'participant_2',
            providerMessageId: 'p9',
            receivedAt: at(0),
          }),
        );
        expect((await store.inbound.listUnprocessed()).map((message) => message.id)).toEqual([
          'inbound_other',
          'inbound_early',
          'inbound_late',
        ]);
        expect((await store.inbound.listUnprocessed('participant_1')).map((message) => message.id)).toEqual([
          'inbound_early',
          'inbound_late',
        ]);
        expect((await store.inbound.listUnprocessed('participant_2')).map((message) => message.id)).toEqual([
          'inbound_other',
        ]);
        expect(await store.inbound.get('inbound_done')).toMatchObject({ status: 'processed', processedAt: at(4) });
        expect(await store.inbound.get('inbound_failed')).toMatchObject({
          status: 'failed',
          lastError: 'llm unavailable',
        });
      });

      it('gives each participant its next unprocessed message in arrival order, whatever the receive times', async () => {
        // The same received_at (a manual clock) or an earlier one (another instance's clock): arrival order wins.
        await store.inbound.record(makeInbound({ id: 'in_a1', providerMessageId: 'a1', receivedAt: at(5) }));
        await store.inbound.record(
          makeInbound({ id: 'in_b1', participantId: 'participant_2', providerMessageId: 'b1', receivedAt: at(5) }),
        );
        await store.inbound.record(makeInbound({ id: 'in_a2', providerMessageId: 'a2', receivedAt: at(4) }));
        await store.inbound.record(makeInbound({ id: 'in_a3', providerMessageId: 'a3', receivedAt: at(5) }));

        expect((await store.inbound.nextUnprocessed('participant_1'))?.id).toBe('in_a1');
        expect(await store.inbound.listParticipantsWithUnprocessed()).toEqual(['participant_1', 'participant_2']);
        await store.inbound.markProcessed('in_a1', at(6));
        expect((await store.inbound.nextUnprocessed('participant_1'))?.id).toBe('in_a2');
        await store.inbound.markFailed('in_a2', 'boom', at(6));
        expect((await store.inbound.nextUnprocessed('participant_1'))?.id).toBe('in_a3');
        await store.inbound.markProcessed('in_a3', at(6));
        expect(await store.inbound.nextUnprocessed('participant_1')).toBeUndefined();
        expect(await store.inbound.listParticipantsWithUnprocessed()).toEqual(['participant_2']);
        expect(await store.inbound.nextUnprocessed('participant_unknown')).toBeUndefined();
      });

      it("tells when a participant's latest message on a channel was received", async () => {
        expect(await store.inbound.lastReceivedAt('participant_1', 'whatsapp')).toBeUndefined();
        await store.inbound.record(makeInbound({ id: 'in_w1', providerMessageId: 'w1', receivedAt: at(5) }));
        await store.inbound.record(makeInbound({ id: 'in_w2', providerMessageId: 'w2', receivedAt: at(7) }));
        await store.inbound.record(makeInbound({ id: 'in_w3', providerMessageId: 'w3', receivedAt: at(6) }));
        await store.inbound.record(
          makeInbound({ id: 'in_o1', channel: 'other', providerMessageId: 'o1', receivedAt: at(9) }),
        );
        expect(await store.inbound.lastReceivedAt('participant_1', 'whatsapp')).toEqual(at(7));
        expect(await store.inbound.lastReceivedAt('participant_1', 'other')).toEqual(at(9));
        expect(await store.inbound.lastReceivedAt('participant_2', 'whatsapp')).toBeUndefined();
      });

      it("holds a participant's received messages once each, until they are processed", async () => {
        await store.inbound.record(makeInbound({ id: 'in_h1', providerMessageId: 'h1' }));
        await store.inbound.record(makeInbound({ id: 'in_h2', providerMessageId: 'h2' }));
        await store.inbound.record(makeInbound({ id: 'in_done', providerMessageId: 'h0' }));
        await store.inbound.record(
          makeInbound({ id: 'in_other', participantId: 'participant_2', providerMessageId: 'o1' }),
        );
        await store.inbound.markProcessed('in_done', at(1));
        expect(await store.inbound.hold('participant_1', 'model down: 503')).toBe(2);
        await store.inbound.record(makeInbound({ id: 'in_h3', providerMessageId: 'h3' }));
        // Held again: only the one not held yet counts, and the first reason stays.
        expect(await store.inbound.hold('participant_1', 'model down: timeout')).toBe(1);
        expect(await store.inbound.get('in_h1')).toMatchObject({ status: 'received', lastError: 'model down: 503' });
        expect(await store.inbound.get('in_h3')).toMatchObject({
          status: 'received',
          lastError: 'model down: timeout',
        });
        expect(await store.inbound.get('in_done')).toMatchObject({ status: 'processed', lastError: undefined });
        expect((await store.inbound.get('in_other'))?.lastError).toBeUndefined();
        expect((await store.inbound.nextUnprocessed('participant_1'))?.lastError).toBe('model down: 503');
        await store.inbound.markProcessed('in_h1', at(2));
        expect(await store.inbound.get('in_h1')).toMatchObject({ status: 'processed', lastError: undefined });
      });
    });

    describe('llm outages', () => {
      it('begins one outage per participant until it ends', async () => {
        await store.participants.create(makeParticipant());
        await store.participants.create(makeParticipant({ id: 'participant_2', phoneNumber: '+15550000002' }));
        expect(await store.llmOutages.get('participant_1')).toBeUndefined();
        const outage = { participantId: 'participant_1', startedAt: at(1), sourceMessageId: 'in_1' };
        expect(await store.llmOutages.begin(outage)).toBe(true);
        expect(await store.llmOutages.begin({ ...outage, startedAt: at(2), sourceMessageId: 'in_2' })).toBe(false);
        expect(await store.llmOutages.get('participant_1')).toEqual(outage);
        expect(await store.llmOutages.get('participant_2')).toBeUndefined();
        expect(await store.llmOutages.end('participant_2')).toBe(false);
        expect(await store.llmOutages.end('participant_1')).toBe(true);
        expect(await store.llmOutages.end('participant_1')).toBe(false);
        expect(await store.llmOutages.get('participant_1')).toBeUndefined();
        expect(
          await store.llmOutages.begin({
            participantId: 'participant_1',
            startedAt: at(3),
            sourceMessageId: undefined,
          }),
        ).toBe(true);
        expect(await store.llmOutages.get('participant_1')).toEqual({
          participantId: 'participant_1',
          startedAt: at(3),
          sourceMessageId: undefined,
        });
      });

      it('lets exactly one of concurrent transactions begin it, and none that rolled back', async () => {
        await store.participants.create(makeParticipant());
        const begin = (minute: number) => ({
          participantId: 'participant_1',
          startedAt: at(minute),
          sourceMessageId: undefined,
        });
        await expect(
          store.transaction(async (tx) => {
            expect(await tx.llmOutages.begin(begin(0))).toBe(true);
            throw new Error('rolled back');
          }),
        ).rejects.toThrow('rolled back');
        expect(await store.llmOutages.get('participant_1')).toBeUndefined();
        const started = await Promise.all(
          [1, 2, 3, 4].map((minute) => store.transaction((tx) => tx.llmOutages.begin(begin(minute)))),
        );
        expect(started.filter(Boolean)).toHaveLength(1);
        expect((await store.llmOutages.get('participant_1'))?.startedAt).toEqual(at(started.indexOf(true) + 1));
      });

      it('goes with its participant', async () => {
        await store.participants.create(makeParticipant());
        await store.llmOutages.begin({ participantId: 'participant_1', startedAt: at(0), sourceMessageId: undefined });
        await store.participants.delete('participant_1');
        expect(await store.llmOutages.get('participant_1')).toBeUndefined();
      });
    });

    describeResearchStoreContract(() => store);
    describeJobHoldContract(() => store);
    describeTelegramStoreContract(() => store);
    describeAlertStoreContract(() => store);
    describe('web-chat tokens', () => {
      it('issues one active token per participant, revoking the previous one', async () => {
        await store.webChatTokens.issue('participant_1', 'token-a', at(0));
        expect(await store.webChatTokens.getActive('participant_1')).toMatchObject({ token: 'token-a' });
        await store.webChatTokens.issue('participant_1', 'token-b', at(1));
        expect(await store.webChatTokens.getActive('participant_1')).toMatchObject({ token: 'token-b' });
        expect(await store.webChatTokens.find('token-a')).toMatchObject({
          participantId: 'participant_1',
          revokedAt: at(1),
        });
        expect(await store.webChatTokens.revokeAll('participant_1', at(2))).toBe(1);
        expect(await store.webChatTokens.getActive('participant_1')).toBeUndefined();
        expect(await store.webChatTokens.find('token-unknown')).toBeUndefined();
      });
    });

    describeDashboardStoreContract(() => store);

    describe('whatsapp-web auth state', () => {
      it('upserts, reads back only the asked ids, deletes with null, and keeps sessions apart', async () => {
        await store.whatsappAuth.write(
          'default',
          [
            { category: 'creds', keyId: '', value: '{"registered":false}' },
            { category: 'pre-key', keyId: '1', value: '{"k":1}' },
            { category: 'pre-key', keyId: '2', value: '{"k":2}' },
          ],
          at(0),
        );
        await store.whatsappAuth.write('other', [{ category: 'pre-key', keyId: '1', value: '{"other":1}' }], at(0));
        await store.whatsappAuth.write(
          'default',
          [
            { category: 'creds', keyId: '', value: '{"registered":true}' },
            { category: 'pre-key', keyId: '2', value: null },
          ],
          at(1),
        );
        expect(await store.whatsappAuth.read('default', 'creds', [''])).toEqual(new Map([['', '{"registered":true}']]));
        expect(await store.whatsappAuth.read('default', 'pre-key', ['1', '2', '3'])).toEqual(
          new Map([['1', '{"k":1}']]),
        );
        expect(await store.whatsappAuth.read('other', 'pre-key', ['1'])).toEqual(new Map([['1', '{"other":1}']]));
        expect(await store.whatsappAuth.read('default', 'pre-key', [])).toEqual(new Map());

        expect(await store.whatsappAuth.clear('default')).toBe(2);
        expect(await store.whatsappAuth.read('default', 'creds', [''])).toEqual(new Map());
        expect((await store.whatsappAuth.read('other', 'pre-key', ['1'])).size).toBe(1);
      });

      it('writes a batch atomically inside a transaction that rolls back', async () => {
        await expect(
          store.transaction(async (tx) => {
            await tx.whatsappAuth.write('default', [{ category: 'session', keyId: 'a', value: '1' }], at(0));
            throw new Error('rollback');
          }),
        ).rejects.toThrow('rollback');
        expect(await store.whatsappAuth.read('default', 'session', ['a'])).toEqual(new Map());
      });
    });

    describe('whatsapp-web sent messages', () => {
      it('records once per provider id and finds by provider id and by outbound id', async () => {
        const poll = { question: 'Did you do it?', options: ['Done', 'Next time'], secret: 'c2VjcmV0' };
        await store.whatsappMessages.record({
          providerMessageId: 'WA1',
          session: 'default',
          outboundId: 'out_1',
          participantId: 'participant_1',
          remoteJid: '15550000001@s.whatsapp.net',
          kind: 'poll',
          poll,
          createdAt: at(0),
        });
        await store.whatsappMessages.record({
          providerMessageId: 'WA1',
          session: 'default',
          outboundId: 'out_other',
          participantId: 'participant_1',
          remoteJid: 'x',
          kind: 'text',
          createdAt: at(1),
        });
        await store.whatsappMessages.record({
          providerMessageId: 'WA2',
          session: 'default',
          outboundId: 'out_2',
          participantId: 'participant_1',
          remoteJid: '15550000001@s.whatsapp.net',
          kind: 'text',
          createdAt: at(2),
        });
        expect(await store.whatsappMessages.get('WA1')).toEqual({
          providerMessageId: 'WA1',
          session: 'default',
          outboundId: 'out_1',
          participantId: 'participant_1',
          remoteJid: '15550000001@s.whatsapp.net',
          kind: 'poll',
          poll,
          createdAt: at(0),
        });
        expect(await store.whatsappMessages.get('WA2')).not.toHaveProperty('poll');
        expect((await store.whatsappMessages.getByOutboundId('out_2'))?.providerMessageId).toBe('WA2');
        expect(await store.whatsappMessages.getByOutboundId('out_other')).toBeUndefined();
        expect(await store.whatsappMessages.get('WA3')).toBeUndefined();
      });
    });
  });
}
