import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { adaptForChannel } from '../../src/channels/delivery-handler.ts';
import {
  createOutboxMessenger,
  type DeliverMessagePayload,
  describeOutgoing,
} from '../../src/channels/outbox-messenger.ts';
import { signatureHeaders, signBody } from '../../src/http/webhook-signature.ts';
import { parseRecordedPoll } from '../../src/inbound/recorded-polls.ts';
import { silentLog } from '../../src/observability/log.ts';
import { createInProcessLock } from '../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { type ApiHarness, createApiHarness } from '../support/api-harness.ts';

const PATH = '/channels/webhook/messages';
const PHONE = '+15551230001';

let harness: ApiHarness;
afterEach(async () => {
  await harness.close();
});

async function post(body: unknown, headers: Record<string, string> = {}) {
  const response = await harness.call('POST', PATH, body, headers);
  await harness.inbound.idle();
  return response;
}

/**
 * A message left `received` by a process that died after its turn: the reply is in the transcript (and its delivery
 * queued), but the message was never marked processed.
 */
/** A SQLite store that records each look-up of an earlier attempt for a message (transcript.forSourceMessage). */
async function storeRecordingLookUps(): Promise<{ store: Store; lookedUp: string[] }> {
  const real = await createSqliteStore({ filename: ':memory:' });
  const lookedUp: string[] = [];
  const store: Store = {
    ...real,
    transcript: {
      ...real.transcript,
      forSourceMessage: (participantId, sourceMessageId) => {
        lookedUp.push(sourceMessageId);
        return real.transcript.forSourceMessage(participantId, sourceMessageId);
      },
    },
  };
  return { store, lookedUp };
}

async function answeredBeforeCrash(harness: ApiHarness, participantId: string, id: string): Promise<void> {
  await harness.store.inbound.record({
    id,
    channel: 'webhook',
    participantId,
    from: PHONE,
    text: 'answered before the crash',
    receivedAt: harness.clock.now(),
  });
  await harness.store.transcript.append([
    {
      participantId,
      role: 'assistant',
      kind: 'reply',
      content: 'the reply that was sent',
      sourceMessageId: id,
      outboundId: 'out_1',
      createdAt: harness.clock.now(),
    },
  ]);
}

describe('POST /channels/webhook/messages', () => {
  it('answers 202 {"status":"ok"} once recorded, then processes the message', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    const response = await post({
      from: '(555) 123-0001',
      text: 'Hello coach',
      id: 'wamid.1',
      timestamp: '2026-03-02T13:59:58Z',
    });
    expect(response.statusCode).toBe(202);
    expect(response.json()).toEqual({ status: 'ok' });
    expect(harness.flow.messages).toEqual([
      {
        participantId: ada.id,
        text: 'Hello coach',
        sourceMessageId: 'in_2',
        // Looked up by the inbound service before the turn: the flow need not look again.
        recorded: false,
        receivedAt: harness.clock.now(),
      },
    ]);
    expect(await harness.store.inbound.get('in_2')).toMatchObject({
      channel: 'webhook',
      providerMessageId: 'wamid.1',
      from: PHONE,
      status: 'processed',
    });
    const transcript = await harness.store.transcript.list(ada.id);
    expect(transcript.map((entry) => entry.content)).toEqual(['Hello coach', 'You said: Hello coach']);
  });

  it('ignores a repeated provider id (still 202, processed once)', async () => {
    harness = await createApiHarness();
    await harness.enroll(PHONE);
    expect((await post({ from: PHONE, text: 'once', id: 'dup-1' })).statusCode).toBe(202);
    expect((await post({ from: PHONE, text: 'once', id: 'dup-1' })).statusCode).toBe(202);
    expect(harness.flow.messages).toHaveLength(1);
    expect((await post({ from: PHONE, text: 'no id' })).statusCode).toBe(202);
    expect((await post({ from: PHONE, text: 'no id' })).statusCode).toBe(202);
    expect(harness.flow.messages).toHaveLength(3);
  });

  it('answers an unknown sender exactly like a known one, without processing or recording the message', async () => {
    // Formerly 404 "no participant is enrolled with phone number …": that told anyone who takes part in the study.
    const logged: unknown[] = [];
    harness = await createApiHarness({ log: { ...silentLog, info: (fields) => logged.push(fields) } });
    await harness.enroll(PHONE);
    const known = await post({ from: PHONE, text: 'hello', id: 'k1' });
    const unknown = await post({ from: '+15559990000', text: 'hello', id: 'u1' });
    expect(unknown.statusCode).toBe(known.statusCode);
    expect(unknown.statusCode).toBe(202);
    expect(unknown.body).toBe(known.body);
    expect(unknown.headers['content-type']).toBe(known.headers['content-type']);
    expect(harness.flow.messages.map((message) => message.text)).toEqual(['hello']);
    expect(await harness.store.participants.getByPhone('+15559990000')).toBeUndefined();
    expect(await harness.store.inbound.listUnprocessed()).toEqual([]);
    expect(logged).toContainEqual({ from: '+15559990000', providerMessageId: 'u1' });
  });

  it('enrolls an unknown sender first with AUTO_ENROLL_NEW_USERS, without a separate greeting', async () => {
    harness = await createApiHarness({ autoEnroll: true });
    const response = await post({ from: '+1 555 999 0000', text: 'I want to join' });
    expect(response.statusCode).toBe(202);
    const participant = await harness.store.participants.getByPhone('+15559990000');
    expect(participant?.status).toBe('active');
    expect(harness.flow.greeted).toEqual([]);
    expect(harness.flow.messages.map((message) => message.participantId)).toEqual([participant?.id]);
    const [event] = await harness.store.events.list({ type: 'participant-enrolled' });
    expect(event?.data).toMatchObject({ source: 'auto-enroll' });
  });

  it.each([
    ['malformed JSON', '{"from": "+1555', 'not valid JSON'],
    ['a missing sender', { text: 'hi' }, 'from is required'],
    ['empty text without a poll answer', { from: PHONE, text: '  ' }, 'text must not be empty'],
    ['a bad phone number', { from: '12', text: 'hi' }, 'not a valid phone number'],
    ['a bad timestamp', { from: PHONE, text: 'hi', timestamp: 'yesterday' }, 'timestamp'],
    [
      'a poll answer without an option',
      { from: PHONE, text: '', poll_answer: { poll_id: 'p' } },
      'poll_answer.option is required',
    ],
  ])('answers 400 for %s', async (_case, body, expected) => {
    harness = await createApiHarness();
    await harness.enroll(PHONE);
    const response = await post(body);
    expect(response.statusCode).toBe(400);
    expect(response.json().status).toBe('error');
    expect(response.json().message).toContain(expected);
    expect(harness.flow.messages).toEqual([]);
  });

  it('accepts a JSON body whatever the content type says', async () => {
    harness = await createApiHarness();
    await harness.enroll(PHONE);
    const response = await post(JSON.stringify({ from: PHONE, text: 'hi' }), { 'content-type': 'text/plain' });
    expect(response.statusCode).toBe(202);
  });

  it('answers 413 for a body over the limit', async () => {
    harness = await createApiHarness({ bodyLimitBytes: 512 });
    await harness.enroll(PHONE);
    const response = await post({ from: PHONE, text: 'x'.repeat(1000) });
    expect(response.statusCode).toBe(413);
  });
});

describe('webhook signatures (PROMPTPIPE_WEBHOOK_SECRET)', () => {
  const SECRET = 'webhook-secret';

  it('accepts a message signed with its time over its raw body', async () => {
    harness = await createApiHarness({ webhookSecret: SECRET });
    await harness.enroll(PHONE);
    // Unusual spacing on purpose: the signature covers the bytes as sent, not re-serialised JSON.
    const raw = '{ "from" : "+15551230001",   "text": "signed" }';
    const response = await post(raw, signatureHeaders(SECRET, raw, new Date()));
    expect(response.statusCode).toBe(202);
    expect(harness.flow.messages.map((message) => message.text)).toEqual(['signed']);
  });

  it.each([
    ['a missing signature', undefined, 'missing X-PromptPipe-Signature'],
    ['a signature with another secret', signBody('other', '{}'), 'wrong X-PromptPipe-Signature'],
    ['a signature without the sha256= prefix', 'deadbeef', 'wrong X-PromptPipe-Signature'],
  ])('answers 401 for %s, before reading the body', async (_case, signature, expected) => {
    harness = await createApiHarness({ webhookSecret: SECRET });
    await harness.enroll(PHONE);
    const raw = JSON.stringify({ from: PHONE, text: 'forged' });
    const response = await post(raw, signature ? { 'x-promptpipe-signature': signature } : {});
    expect(response.statusCode).toBe(401);
    expect(response.json()).toEqual({ status: 'error', message: expect.stringContaining(expected) });
    expect(harness.flow.messages).toEqual([]);
    expect(await harness.store.inbound.listUnprocessed()).toEqual([]);
  });

  it('rejects a body altered after signing', async () => {
    harness = await createApiHarness({ webhookSecret: SECRET });
    await harness.enroll(PHONE);
    const signed = JSON.stringify({ from: PHONE, text: 'pay 10' });
    const altered = JSON.stringify({ from: PHONE, text: 'pay 99' });
    expect((await post(altered, { 'x-promptpipe-signature': signBody(SECRET, signed) })).statusCode).toBe(401);
  });
});

describe('poll answers', () => {
  let polls = 0;
  async function sendPoll(participantId: string, question: string, options: string[]) {
    polls += 1;
    const pollId = polls === 1 ? 'out_poll' : `out_poll_${polls}`;
    const messenger = createOutboxMessenger({ store: harness.store, clock: harness.clock, newId: () => pollId });
    return messenger.send(participantId, { type: 'poll', question, options }, { kind: 'poll', module: 'scheduler' });
  }

  beforeEach(() => {
    polls = 0;
  });

  it('resolves a native poll_answer to the question of the poll it answers', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    await sendPoll(ada.id, 'Did you do it?', ['Done', 'Next time']);
    const response = await post({ from: PHONE, text: '', poll_answer: { poll_id: 'out_poll', option: 'Done' } });
    expect(response.statusCode).toBe(202);
    expect(harness.flow.messages[0]?.pollAnswer).toEqual({
      pollId: 'out_poll',
      question: 'Did you do it?',
      option: 'Done',
    });
    expect(harness.flow.messages[0]?.text).toBe('Done');
  });

  it('resolves an answer to an earlier poll from its transcript entry', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    await sendPoll(ada.id, 'Did you do it?', ['Done', 'Next time']);
    await sendPoll(ada.id, "How's the intensity?", ['Decrease', 'Keep current', 'Increase']);
    await post({ from: PHONE, text: '', poll_answer: { poll_id: 'out_poll', option: 'Done' } });
    await post({ from: PHONE, text: '', poll_answer: { poll_id: 'out_poll_2', option: 'Increase' } });
    expect(harness.flow.messages.map((message) => message.pollAnswer)).toEqual([
      { pollId: 'out_poll', question: 'Did you do it?', option: 'Done' },
      { pollId: 'out_poll_2', question: "How's the intensity?", option: 'Increase' },
    ]);
  });

  it('numbers a poll sent right after another on (SMS), and a bare number names that one option', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    await sendPoll(ada.id, 'Did you do it?', ['Done', 'Next time']);
    await sendPoll(ada.id, "How's the intensity?", ['Decrease', 'Keep current', 'Increase']);
    // What a channel without polls sends: the two polls numbered 1–2 and 3–5.
    const jobs = await harness.store.jobs.listPending({ kind: 'deliver_message' });
    const rendered = jobs.map((job) =>
      adaptForChannel((job.payload as DeliverMessagePayload).message, { supportsPolls: false }),
    );
    expect(rendered.map((message) => message.text)).toEqual([
      'Did you do it?\nReply 1 for Done, 2 for Next time',
      "How's the intensity?\nReply 3 for Decrease, 4 for Keep current, 5 for Increase",
    ]);
    await post({ from: PHONE, text: '1' });
    expect(harness.flow.messages.at(-1)?.pollAnswer).toEqual({
      pollId: 'out_poll',
      question: 'Did you do it?',
      option: 'Done',
    });
    // The participant wrote: the run is over, a new poll starts again at 1; "5" names nothing any more.
    await sendPoll(ada.id, "How's the intensity?", ['Decrease', 'Keep current', 'Increase']);
    const third = (await harness.store.jobs.listPending({ kind: 'deliver_message' })).at(-1);
    if (!third) throw new Error('the third poll was not queued');
    expect(adaptForChannel((third.payload as DeliverMessagePayload).message, { supportsPolls: false }).text).toBe(
      "How's the intensity?\nReply 1 for Decrease, 2 for Keep current, 3 for Increase",
    );
    await post({ from: PHONE, text: '3' });
    expect(harness.flow.messages.at(-1)?.pollAnswer).toMatchObject({ option: 'Increase' });
    await sendPoll(ada.id, 'Did you do it?', ['Done', 'Next time']);
    await post({ from: PHONE, text: '5' });
    expect(harness.flow.messages.at(-1)?.pollAnswer).toBeUndefined();
  });

  it('reads back exactly what the outbox recorded for a poll', () => {
    const poll = { type: 'poll' as const, question: 'Did you do it? [really]', options: ['Done', 'Next | time'] };
    expect(parseRecordedPoll('out_1', describeOutgoing(poll))).toEqual({
      id: 'out_1',
      question: 'Did you do it? [really]',
      options: ['Done', 'Next', 'time'],
    });
    expect(parseRecordedPoll('out_1', 'plain text')).toBeUndefined();
  });

  it('passes an answer to an unknown poll through without guessing its question', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    await sendPoll(ada.id, 'Did you do it?', ['Done', 'Next time']);
    await post({ from: PHONE, text: '', poll_answer: { poll_id: 'out_older', option: 'Next time' } });
    expect(harness.flow.messages[0]?.pollAnswer).toEqual({ pollId: 'out_older', option: 'Next time' });
  });

  it.each([
    ['its number', '1', 'Done'],
    ['its number with a dot', ' 2. ', 'Next time'],
    ['its exact text in another case', 'done!', 'Done'],
  ])('turns a reply that is %s into the structured answer while the poll is open', async (_case, text, option) => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    await sendPoll(ada.id, 'Did you do it?', ['Done', 'Next time']);
    await post({ from: PHONE, text });
    expect(harness.flow.messages[0]?.pollAnswer).toEqual({ pollId: 'out_poll', question: 'Did you do it?', option });
  });

  it('leaves free text, out-of-range numbers and replies after the poll closed alone', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    await sendPoll(ada.id, 'Did you do it?', ['Done', 'Next time']);
    await post({ from: PHONE, text: 'I am done with this' });
    await post({ from: PHONE, text: '1' });
    expect(harness.flow.messages.map((message) => message.pollAnswer)).toEqual([undefined, undefined]);

    await sendPoll(ada.id, 'Did you do it?', ['Done', 'Next time']);
    await post({ from: PHONE, text: '3' });
    expect(harness.flow.messages[2]?.pollAnswer).toBeUndefined();
  });
});

describe('processing', () => {
  it('records but does not answer messages of participants who are not active', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE, { status: 'paused' });
    const response = await post({ from: PHONE, text: 'are you there?' });
    expect(response.statusCode).toBe(202);
    expect(harness.flow.messages).toEqual([]);
    const transcript = await harness.store.transcript.list(ada.id);
    expect(transcript.map((entry) => [entry.role, entry.content])).toEqual([['user', 'are you there?']]);
    expect(await harness.store.events.list({ participantId: ada.id, type: 'message-ignored' })).toHaveLength(1);
    expect(await harness.store.inbound.listUnprocessed()).toEqual([]);
  });

  it('marks a message failed when its turn throws, and keeps going with the next', async () => {
    harness = await createApiHarness();
    await harness.enroll(PHONE);
    harness.flow.failMessages = true;
    await post({ from: PHONE, text: 'first', id: 'm1' });
    harness.flow.failMessages = false;
    await post({ from: PHONE, text: 'second', id: 'm2' });
    expect((await harness.store.inbound.get('in_2'))?.status).toBe('failed');
    expect((await harness.store.inbound.get('in_2'))?.lastError).toBe('turn exploded');
    expect((await harness.store.inbound.get('in_3'))?.status).toBe('processed');
  });

  it('processes the messages of one participant in arrival order', async () => {
    harness = await createApiHarness();
    await harness.enroll(PHONE);
    let release: () => void = () => undefined;
    harness.flow.gate = new Promise((resolve) => {
      release = resolve;
    });
    await harness.call('POST', PATH, { from: PHONE, text: 'one' });
    await harness.call('POST', PATH, { from: PHONE, text: 'two' });
    await harness.call('POST', PATH, { from: PHONE, text: 'three' });
    release();
    await harness.inbound.idle();
    expect(harness.flow.messages.map((message) => message.text)).toEqual(['one', 'two', 'three']);
  });

  it('processes messages left unprocessed by a crash on start-up', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    await harness.store.inbound.record({
      id: 'in_before_crash',
      channel: 'webhook',
      participantId: ada.id,
      from: PHONE,
      text: 'lost?',
      receivedAt: harness.clock.now(),
    });
    expect(await harness.inbound.recoverUnprocessed()).toBe(1);
    await harness.inbound.idle();
    expect(harness.flow.messages.map((message) => message.sourceMessageId)).toEqual(['in_before_crash']);
    expect((await harness.store.inbound.get('in_before_crash'))?.status).toBe('processed');
  });

  it('does not answer again a message whose reply went out before a crash; only marks it processed', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    await answeredBeforeCrash(harness, ada.id, 'in_answered');
    expect(await harness.inbound.recoverUnprocessed()).toBe(1);
    await harness.inbound.idle();
    expect(harness.flow.messages).toEqual([]);
    expect((await harness.store.inbound.get('in_answered'))?.status).toBe('processed');
  });

  it('as the only processor, skips the look-up of an earlier attempt for a message it received itself', async () => {
    const { store, lookedUp } = await storeRecordingLookUps();
    harness = await createApiHarness({ store });
    const ada = await harness.enroll(PHONE);
    await post({ from: PHONE, text: 'fresh', id: 'm1' });
    expect(harness.flow.messages.map((message) => [message.text, message.recorded])).toEqual([['fresh', false]]);
    expect(lookedUp).toEqual([]);
    // Left by an earlier process, answered before it died: looked up, and not answered again.
    await answeredBeforeCrash(harness, ada.id, 'in_left');
    await harness.inbound.recoverUnprocessed();
    await harness.inbound.idle();
    expect(lookedUp).toEqual(['in_left']);
    expect(harness.flow.messages.map((message) => message.text)).toEqual(['fresh']);
    expect((await harness.store.inbound.get('in_left'))?.status).toBe('processed');
  });

  it('with a lock shared by instances, looks up an earlier attempt even for a message it received itself', async () => {
    const { store, lookedUp } = await storeRecordingLookUps();
    // Like the PostgreSQL coordinator's lock: not confined to this process, so another instance may have begun it.
    const inProcess = createInProcessLock();
    harness = await createApiHarness({
      store,
      inboundLock: { run: (participantId, work, options) => inProcess.run(participantId, work, options) },
    });
    await harness.enroll(PHONE);
    await post({ from: PHONE, text: 'fresh', id: 'm1' });
    expect(harness.flow.messages.map((message) => [message.text, message.recorded])).toEqual([['fresh', false]]);
    expect(lookedUp).toEqual([harness.flow.messages[0]?.sourceMessageId]);
  });

  it('processes one participant’s messages in arrival order even when recorded with the same time', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    for (const id of ['in_c', 'in_a', 'in_b']) {
      await harness.store.inbound.record({
        id,
        channel: 'webhook',
        participantId: ada.id,
        from: PHONE,
        text: id,
        receivedAt: harness.clock.now(),
      });
    }
    await harness.inbound.recoverUnprocessed();
    await harness.inbound.idle();
    expect(harness.flow.messages.map((message) => message.text)).toEqual(['in_c', 'in_a', 'in_b']);
  });

  it('answers a message left unprocessed before a new one, and one received during a turn after it', async () => {
    harness = await createApiHarness();
    const ada = await harness.enroll(PHONE);
    await harness.store.inbound.record({
      id: 'in_left',
      channel: 'webhook',
      participantId: ada.id,
      from: PHONE,
      text: 'left over',
      receivedAt: harness.clock.now(),
    });
    let release: () => void = () => undefined;
    harness.flow.gate = new Promise((resolve) => {
      release = resolve;
    });
    expect((await harness.call('POST', PATH, { from: PHONE, text: 'new' })).statusCode).toBe(202);
    expect((await harness.call('POST', PATH, { from: PHONE, text: 'during' })).statusCode).toBe(202);
    release();
    await harness.inbound.idle();
    expect(harness.flow.messages.map((message) => message.text)).toEqual(['left over', 'new', 'during']);
    expect((await harness.store.inbound.nextUnprocessed(ada.id))?.id).toBeUndefined();
  });

  it('finishes the turn in flight on stop and refuses new messages with 503', async () => {
    harness = await createApiHarness();
    await harness.enroll(PHONE);
    let release: () => void = () => undefined;
    harness.flow.gate = new Promise((resolve) => {
      release = resolve;
    });
    await harness.call('POST', PATH, { from: PHONE, text: 'in flight' });
    const stopped = harness.inbound.stop();
    const refused = await harness.call('POST', PATH, { from: PHONE, text: 'too late' });
    expect(refused.statusCode).toBe(503);
    release();
    await stopped;
    expect((await harness.store.inbound.get('in_2'))?.status).toBe('processed');
    expect(harness.flow.messages.map((message) => message.text)).toEqual(['in flight']);
  });
});
