/**
 * Crash recovery of inbound messages, in process: a message recorded but never marked processed is processed again
 * on start-up. What the interrupted attempt already committed (the participant's message in the transcript, the
 * reply in the outbox) is found by the message's id and not done twice. The real-process SIGKILL test
 * (test/e2e/kill-recovery.test.ts) drives the same paths at random moments.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { startTestApplication } from '../support/test-application.ts';
import { waitUntil } from '../support/wait-until.ts';

const PHONE = '+15551230001';
const RECEIVED_AT = new Date('2026-03-02T14:00:00Z');
let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let app: Application;
let participantId: string;

beforeEach(async () => {
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({
    respond: (request) => ({ content: `Reply to "${request.lastMessage?.content}"` }),
  });
  app = await startTestApplication(
    {
      OPENAI_BASE_URL: model.baseUrl,
      PROMPTPIPE_CLOCK_START: RECEIVED_AT.toISOString(),
      PROMPTPIPE_WEBHOOK_URL: gateway.url,
    },
    { start: false },
  );
  const participant = await app.participants.enroll({ phoneNumber: PHONE, name: 'Ada' }, { greet: false });
  participantId = participant.id;
});
afterEach(async () => {
  await app.stop();
  await model.close();
  await gateway.close();
});

async function recordUnprocessed(id: string, text: string): Promise<void> {
  await app.store.inbound.record({
    id,
    channel: 'webhook',
    participantId,
    from: PHONE,
    text,
    receivedAt: RECEIVED_AT,
  });
}

const transcriptOf = async () =>
  (await app.store.transcript.list(participantId)).map((entry) => [entry.role, entry.kind, entry.content]);

describe('recovering a message left unprocessed by a crash', () => {
  it('answers a message the crash interrupted before anything was recorded, once', async () => {
    await recordUnprocessed('in_crash_1', 'hello before the crash');
    await app.start();
    await app.inbound.idle();
    await waitUntil('the reply delivery', () => gateway.requests.length === 1);
    expect(JSON.parse(gateway.requests[0]?.body ?? '').text).toBe('Reply to "hello before the crash"');
    expect(await transcriptOf()).toEqual([
      ['user', 'message', 'hello before the crash'],
      ['assistant', 'reply', 'Reply to "hello before the crash"'],
    ]);
    expect((await app.store.inbound.get('in_crash_1'))?.status).toBe('processed');
  });

  it('does not record the message twice when the crash came after it was recorded, before the reply', async () => {
    await recordUnprocessed('in_crash_2', 'recorded, not answered');
    await app.store.transcript.append([
      {
        participantId,
        role: 'user',
        kind: 'message',
        content: 'recorded, not answered',
        sourceMessageId: 'in_crash_2',
        createdAt: RECEIVED_AT,
      },
    ]);
    await app.start();
    await app.inbound.idle();
    await waitUntil('the reply delivery', () => gateway.requests.length === 1);
    expect(await transcriptOf()).toEqual([
      ['user', 'message', 'recorded, not answered'],
      ['assistant', 'reply', 'Reply to "recorded, not answered"'],
    ]);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.lastMessage?.content).toBe('recorded, not answered');
  });

  it('does not answer again when the reply was already committed before the crash', async () => {
    await recordUnprocessed('in_crash_3', 'answered before the crash');
    await app.store.transcript.append([
      {
        participantId,
        role: 'user',
        kind: 'message',
        content: 'answered before the crash',
        sourceMessageId: 'in_crash_3',
        createdAt: RECEIVED_AT,
      },
      {
        participantId,
        role: 'assistant',
        kind: 'reply',
        content: 'the reply that was already queued',
        outboundId: 'out_before',
        sourceMessageId: 'in_crash_3',
        createdAt: RECEIVED_AT,
      },
    ]);
    await app.start();
    await app.inbound.idle();
    await waitUntil('the message marked processed', async () => {
      return (await app.store.inbound.get('in_crash_3'))?.status === 'processed';
    });
    expect(model.requests).toEqual([]);
    expect(await transcriptOf()).toHaveLength(2);
    expect(await app.store.jobs.listPending({ participantId })).toEqual([]);
  });
});
