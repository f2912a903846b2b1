/**
 * The research-data part of the store contract (llm_calls, transcript → llm call link, broadcasts, keyset pages).
 * Called from `describeStoreContract`, so it runs on every adapter.
 */
import { describe, expect, it } from 'vitest';
import type { Participant } from '../../src/domain/participant.ts';
import type { Store } from '../../src/store/store.ts';

const BASE = Date.parse('2025-03-01T08:00:00.000Z');
const at = (minutes: number): Date => new Date(BASE + minutes * 60_000 + 123);

function participant(id: string, phone: string, minutes: number): Participant {
  return {
    id,
    phoneNumber: phone,
    name: id,
    gender: '',
    ethnicity: '',
    background: '',
    timezone: 'UTC',
    channel: 'webhook',
    status: 'active',
    enrolledAt: at(minutes),
    createdAt: at(minutes),
    updatedAt: at(minutes),
  };
}

export function describeResearchStoreContract(current: () => Store): void {
  describe('research data', () => {
    it('records LLM calls with every provenance field and links transcript entries to them', async () => {
      const store = current();
      const id = await store.llmCalls.record({
        participantId: 'p1',
        purpose: 'intake',
        model: 'gpt-test',
        providerHost: 'api.example.org',
        temperature: 0.25,
        promptFile: 'intake_system.txt',
        promptVersion: 'abc123def456',
        promptTokens: 11,
        completionTokens: 7,
        totalTokens: 18,
        latencyMs: 42,
        outcome: 'success',
        createdAt: at(1),
      });
      const failed = await store.llmCalls.record({
        purpose: 'feedback',
        model: 'gpt-test',
        providerHost: 'api.example.org',
        latencyMs: 5,
        outcome: 'llm_error',
        error: 'boom',
        createdAt: at(2),
      });
      expect(failed).toBeGreaterThan(id);
      const calls = await store.llmCalls.getMany([failed, id]);
      expect(calls).toEqual([
        {
          id,
          participantId: 'p1',
          purpose: 'intake',
          model: 'gpt-test',
          providerHost: 'api.example.org',
          temperature: 0.25,
          promptFile: 'intake_system.txt',
          promptVersion: 'abc123def456',
          promptTokens: 11,
          completionTokens: 7,
          totalTokens: 18,
          latencyMs: 42,
          outcome: 'success',
          createdAt: at(1),
        },
        {
          id: failed,
          purpose: 'feedback',
          model: 'gpt-test',
          providerHost: 'api.example.org',
          latencyMs: 5,
          outcome: 'llm_error',
          error: 'boom',
          createdAt: at(2),
        },
      ]);
      const [entry] = await store.transcript.append([
        { participantId: 'p1', role: 'assistant', kind: 'reply', content: 'hi', llmCallId: id, createdAt: at(1) },
      ]);
      expect(entry?.llmCallId).toBe(id);
      expect((await store.transcript.list('p1'))[0]?.llmCallId).toBe(id);
      expect(await store.research.llmCallsPage({ since: at(2) }, undefined, 10)).toHaveLength(1);
      expect(await store.research.llmCallsPage({}, id, 10)).toHaveLength(1);
    });

    it('counts jobs by status under a dedup-key prefix', async () => {
      const store = current();
      const job = (id: string, key: string) => ({ id, kind: 'k', runAt: at(0), payload: {}, dedupKey: key });
      await store.jobs.enqueue(job('a', 'broadcast:b_1:p1'), at(0));
      await store.jobs.enqueue(job('b', 'broadcast:b_1:p2'), at(0));
      await store.jobs.enqueue(job('c', 'broadcast:b_1:p3'), at(0));
      await store.jobs.enqueue(job('d', 'broadcast:b_10:p1'), at(0));
      await store.jobs.enqueue(job('e', 'broadcastXb_1:p9'), at(0));
      await store.jobs.cancelById('c', at(1));
      const [claimed] = await store.jobs.claimDue({ now: at(1), owner: 'o', leaseMs: 1000, limit: 1, kinds: ['k'] });
      if (claimed) await store.jobs.complete(claimed.id, at(1));
      const counts = await store.research.jobStatusCountsByKeyPrefix('broadcast:b_1:');
      const total = Object.values(counts).reduce((sum, n) => sum + (n ?? 0), 0);
      expect(total).toBe(3);
      expect(counts.cancelled).toBe(1);
      expect(await store.research.jobStatusCountsByKeyPrefix('nothing:')).toEqual({});
    });

    it('finds the jobs of a kind created by some participants within a time span', async () => {
      const store = current();
      const job = (id: string, kind: string, participantId: string, created: Date) =>
        store.jobs.enqueue({ id, kind, participantId, runAt: created, payload: { id } }, created);
      await job('in1', 'deliver', 'p1', at(1));
      await job('in2', 'deliver', 'p2', at(3));
      await job('late', 'deliver', 'p1', at(4));
      await job('other-kind', 'timer', 'p1', at(2));
      await job('other-participant', 'deliver', 'p3', at(2));
      const found = await store.research.jobsCreatedBetween('deliver', ['p1', 'p2'], at(1), at(3));
      expect(found.map((item) => item.id).sort()).toEqual(['in1', 'in2']);
      expect(await store.research.jobsCreatedBetween('deliver', [], at(0), at(9))).toEqual([]);
    });

    it('stores broadcasts', async () => {
      const store = current();
      await store.broadcasts.create({
        id: 'b1',
        text: 'Hello all',
        filter: { status: ['active'] },
        recipients: 3,
        createdAt: at(0),
      });
      expect(await store.broadcasts.get('b1')).toEqual({
        id: 'b1',
        text: 'Hello all',
        filter: { status: ['active'] },
        recipients: 3,
        createdAt: at(0),
      });
      expect(await store.broadcasts.get('nope')).toBeUndefined();
    });

    it('pages tables by key with participant and since filters', async () => {
      const store = current();
      for (const [index, id] of ['pa', 'pb', 'pc'].entries()) {
        await store.participants.create(participant(id, `+1555000000${index}`, index));
      }
      const first = await store.research.participantsPage({}, undefined, 2);
      expect(first.map((p) => p.id)).toEqual(['pa', 'pb']);
      expect((await store.research.participantsPage({}, 'pb', 2)).map((p) => p.id)).toEqual(['pc']);
      expect((await store.research.participantsPage({ since: at(1) }, undefined, 5)).map((p) => p.id)).toEqual([
        'pb',
        'pc',
      ]);
      expect(
        (await store.research.participantsPage({ participantIds: ['pc'] }, undefined, 5)).map((p) => p.id),
      ).toEqual(['pc']);

      await store.transcript.append(
        [0, 1, 2, 3].map((minute) => ({
          participantId: minute % 2 === 0 ? 'pa' : 'pb',
          role: 'user' as const,
          kind: 'message' as const,
          content: `m${minute}`,
          createdAt: at(minute),
        })),
      );
      const page1 = await store.research.transcriptPage({}, undefined, 3);
      expect(page1.map((entry) => entry.content)).toEqual(['m0', 'm1', 'm2']);
      const page2 = await store.research.transcriptPage({}, page1[2]?.id, 3);
      expect(page2.map((entry) => entry.content)).toEqual(['m3']);
      const filtered = await store.research.transcriptPage({ participantIds: ['pa'], since: at(1) }, undefined, 10);
      expect(filtered.map((entry) => entry.content)).toEqual(['m2']);

      await store.events.record({ participantId: 'pa', type: 'x', data: { n: 1 }, createdAt: at(0) });
      await store.events.record({ participantId: 'pb', type: 'y', data: { n: 2 }, createdAt: at(5) });
      expect((await store.research.eventsPage({ since: at(1) }, undefined, 10)).map((event) => event.type)).toEqual([
        'y',
      ]);

      await store.jobs.enqueue({ id: 'j2', kind: 'k', participantId: 'pa', runAt: at(0), payload: {} }, at(0));
      await store.jobs.enqueue({ id: 'j1', kind: 'k', participantId: 'pb', runAt: at(0), payload: {} }, at(0));
      expect((await store.research.jobsPage({}, undefined, 1)).map((job) => job.id)).toEqual(['j1']);
      expect((await store.research.jobsPage({}, 'j1', 5)).map((job) => job.id)).toEqual(['j2']);
      expect((await store.research.jobsPage({ participantIds: ['pa'] }, undefined, 5)).map((job) => job.id)).toEqual([
        'j2',
      ]);
    });
  });
}
