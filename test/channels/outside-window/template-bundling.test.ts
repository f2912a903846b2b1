/**
 * The outbox outside the 24-hour window, in process with the real runner and store (template-bundling.ts,
 * window-resend.ts): a prompt and the polls queued behind it go as one message, the folded deliveries finished only
 * once it is sent (a failed send leaves them queued, a refused one lets each fail on its own); a provider's
 * "outside the window" failure re-sends a message at most once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OutboundMessage, TemplateWindow } from '../../../src/channels/channel.ts';
import { createChannelRegistry } from '../../../src/channels/channel-registry.ts';
import { createDeliveryHandler, DELIVER_MESSAGE_JOB } from '../../../src/channels/delivery-handler.ts';
import { createDeliveryReceipts, type DeliveryReceipts } from '../../../src/channels/delivery-receipts.ts';
import { createOutboxMessenger } from '../../../src/channels/outbox-messenger.ts';
import { withTemplateBundling } from '../../../src/channels/outside-window/template-bundling.ts';
import {
  createWindowResendHandler,
  WINDOW_RESEND_JOB,
  withWindowResend,
} from '../../../src/channels/outside-window/window-resend.ts';
import { createRecordingChannel, type RecordingChannel } from '../../../src/channels/recording-channel.ts';
import { sequentialIds } from '../../../src/domain/ids.ts';
import type { Messenger } from '../../../src/engine/messenger.ts';
import { silentLog } from '../../../src/observability/log.ts';
import { createMetrics } from '../../../src/observability/metrics.ts';
import { createManualClock, type ManualClock } from '../../../src/scheduling/clock.ts';
import type { JobRunner } from '../../../src/scheduling/job-runner.ts';
import { createJobRunner } from '../../../src/scheduling/job-runner-service.ts';
import { createInProcessLock } from '../../../src/store/participant-lock.ts';
import { createSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../../src/store/store.ts';

const START = new Date('2026-03-02T14:00:00.000Z');
const PARTICIPANT = {
  id: 'conv_1',
  phoneNumber: '+15551230001',
  name: '',
  gender: '',
  ethnicity: '',
  background: '',
  timezone: '',
  channel: 'whatsapp',
  language: 'en',
  status: 'active' as const,
  enrolledAt: START,
  createdAt: START,
  updatedAt: START,
};
const DONE = { type: 'poll' as const, question: 'Did you do it?', options: ['Done', 'Next time'] };
const INTENSITY = {
  type: 'poll' as const,
  question: "How's the intensity?",
  options: ['Decrease', 'Keep', 'Increase'],
};

let store: Store;
let clock: ManualClock;
let runner: JobRunner;
let messenger: Messenger;
let receipts: DeliveryReceipts;
let channel: RecordingChannel;
let windowClosed: boolean;

beforeEach(async () => {
  store = await createSqliteStore({ filename: ':memory:' });
  clock = createManualClock(START);
  runner = createJobRunner({ store, clock, lock: createInProcessLock(), log: silentLog });
  const newId = sequentialIds();
  messenger = createOutboxMessenger({ store, clock, newId });
  windowClosed = true;
  const templateWindow: TemplateWindow = {
    isClosed: async () => windowClosed,
    fitsOneTemplate: (message) => (message.followUps?.length ?? 0) <= 2,
    closedErrorCodes: ['131047'],
  };
  channel = Object.assign(createRecordingChannel({ name: 'whatsapp' }), { templateWindow });
  const channels = createChannelRegistry([channel]);
  const metrics = createMetrics();
  receipts = createDeliveryReceipts({ store, clock, metrics, log: silentLog });
  runner.register(
    DELIVER_MESSAGE_JOB,
    withTemplateBundling({
      store,
      channels,
      receipts,
      clock,
      log: silentLog,
      handler: createDeliveryHandler({ channels, metrics, log: silentLog, receipts }),
    }),
    { ordered: true },
  );
  runner.register(WINDOW_RESEND_JOB, createWindowResendHandler({ store, clock, newId, log: silentLog }));
  receipts = withWindowResend(receipts, { store, channels, clock, newId, log: silentLog });
  await store.participants.create(PARTICIPANT);
});
afterEach(async () => {
  await runner.stop();
  await store.close();
});

async function sendPrompt(): Promise<void> {
  await messenger.send(PARTICIPANT.id, { type: 'text', text: 'Time for your walk' }, { kind: 'proactive' });
  await messenger.send(PARTICIPANT.id, DONE, { kind: 'poll' });
  await messenger.send(PARTICIPANT.id, INTENSITY, { kind: 'poll' });
}

const statuses = async (outboundId: string) =>
  (await store.deliveries.listFor(outboundId)).map((record) => record.status);

describe('a prompt and its polls outside the window', () => {
  it('go as one message with the participant’s language; the folded polls are done with its receipt', async () => {
    await sendPrompt();
    await runner.runDue();
    expect(channel.delivered).toHaveLength(1);
    const [bundle] = channel.delivered as [OutboundMessage];
    expect(bundle).toMatchObject({ text: 'Time for your walk', language: 'en' });
    expect(bundle.followUps?.map((followUp) => followUp.poll?.question)).toEqual([DONE.question, INTENSITY.question]);
    expect(bundle.followUps?.[1]?.poll?.firstNumber).toBe(3);
    expect(await store.jobs.listPending({ kind: DELIVER_MESSAGE_JOB })).toEqual([]);
    for (const message of [bundle, ...(bundle.followUps ?? [])]) expect(await statuses(message.id)).toEqual(['sent']);
  });

  it('inside the window, each goes on its own', async () => {
    windowClosed = false;
    await sendPrompt();
    await runner.runDue();
    expect(channel.delivered.map((message) => message.followUps)).toEqual([undefined, undefined, undefined]);
  });

  it('a failed send leaves the polls queued, never lost nor sent twice; a refused one lets each fail alone', async () => {
    await sendPrompt();
    const jobs = await store.jobs.listPending({ kind: DELIVER_MESSAGE_JOB });
    const queued = jobs.map((job) => job.id);
    const outboundIds = jobs.map((job) => (job.payload as { message: OutboundMessage }).message.id);
    channel.failNext = 1;
    await runner.advanceTo(new Date(START.getTime() + 60_000));
    // The prompt's send failed: its polls stayed queued (the ordered claim no longer waits for a job backing off, so
    // they go on as one message), and the prompt goes on its retry.
    const ids = channel.delivered.flatMap((message) => [message.id, ...(message.followUps ?? []).map((f) => f.id)]);
    expect(ids.sort()).toEqual(outboundIds.sort());
    expect(await store.jobs.listPending({ kind: DELIVER_MESSAGE_JOB })).toEqual([]);
    expect((await Promise.all(queued.map((id) => store.jobs.get(id)))).map((job) => job?.status).sort()).toEqual([
      'cancelled',
      'completed',
      'completed',
    ]);

    await sendPrompt();
    channel.refuseNext = 3;
    await runner.runDue();
    const refused = channel.attempts.slice(-3);
    expect(refused.map((message) => message.followUps?.length ?? 0)).toEqual([2, 1, 0]);
    for (const message of refused) expect(await statuses(message.id)).toEqual(['failed']);
  });
});

describe('a receipt saying the window was closed', () => {
  it('re-sends the message and the polls after it once, as one message, and never a re-sent one again', async () => {
    windowClosed = false;
    await sendPrompt();
    await runner.runDue();
    const sent = [...channel.delivered];
    expect(sent).toHaveLength(3);
    for (const message of sent) {
      await receipts.receive({
        channel: 'whatsapp',
        providerMessageId: `provider_${message.id}`,
        status: 'failed',
        errorCode: '131047',
      });
    }
    await runner.runDue();
    expect(channel.delivered).toHaveLength(4);
    const resent = channel.delivered[3] as OutboundMessage;
    expect(resent).toMatchObject({ id: sent[0]?.id, outsideWindow: true, text: 'Time for your walk' });
    expect(resent.followUps?.map((followUp) => followUp.id)).toEqual([sent[1]?.id, sent[2]?.id]);
    expect(resent.followUps?.[1]?.poll?.firstNumber).toBe(3);

    // The template fails the same way: it is not sent a third time.
    await receipts.receive({
      channel: 'whatsapp',
      providerMessageId: `provider_${resent.id}`,
      status: 'failed',
      errorCode: '131047',
    });
    await runner.runDue();
    expect(channel.delivered).toHaveLength(4);
    // Another error is only recorded.
    await receipts.receive({ channel: 'whatsapp', providerMessageId: 'provider_x', status: 'failed', errorCode: '1' });
    expect(await store.jobs.listPending({ kind: WINDOW_RESEND_JOB })).toEqual([]);
  });
});
