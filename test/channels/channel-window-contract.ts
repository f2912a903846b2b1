/**
 * The 24-hour window part of the channel contract (channel-contract.ts), for adapters with a `templateWindow`
 * (WhatsApp through the Cloud API or Twilio): outside the window a message goes as ONE template whose variable is one
 * line, a poll keeps its options, a prompt and its polls are one template, and a provider's "outside the window"
 * failure in a receipt re-sends the message and its polls as that template.
 */
import { expect } from 'vitest';
import type { OutboundMessage } from '../../src/channels/channel.ts';
import { adaptForChannel } from '../../src/channels/delivery-handler.ts';
import { createOutboxMessenger, type DeliverMessagePayload } from '../../src/channels/outbox-messenger.ts';
import { createWindowResendHandler } from '../../src/channels/outside-window/window-resend.ts';
import { silentLog } from '../../src/observability/log.ts';
import type { ChannelContractFixture } from './channel-contract.ts';

export type WindowContractCase =
  | 'outside the window: text as a template'
  | 'outside the window: a poll keeps its options'
  | 'outside the window: a prompt and its polls in one template'
  | 'outside the window: a failed receipt re-sends as a template';

export const WINDOW_CONTRACT_CASES: readonly WindowContractCase[] = [
  'outside the window: text as a template',
  'outside the window: a poll keeps its options',
  'outside the window: a prompt and its polls in one template',
  'outside the window: a failed receipt re-sends as a template',
];

const PHONE = '+15551230001';
const DONE = { question: 'Did you do it?', options: ['Done', 'Next time'] };
const INTENSITY = { question: "How's the intensity?", options: ['Decrease', 'Keep current', 'Increase'] };

function outbound(overrides: Partial<OutboundMessage>): OutboundMessage {
  return { id: 'out_w1', participantId: 'p_1', to: PHONE, kind: 'text', text: 'Time for your walk', ...overrides };
}

function poll(id: string, shape: typeof DONE, firstNumber?: number): OutboundMessage {
  return outbound({
    id,
    kind: 'poll',
    text: shape.question,
    poll: { id, ...shape, options: [...shape.options], ...(firstNumber ? { firstNumber } : {}) },
  });
}

function window(fixture: ChannelContractFixture): NonNullable<ChannelContractFixture['window']> {
  if (!fixture.window || !fixture.channel.templateWindow) throw new Error('fixture has no 24-hour window');
  return fixture.window;
}

/** Every option is shown: as a quick-reply button, or numbered in the one-line text. */
function expectOptionsPresented(sent: { text: string; options?: string[] }, options: readonly string[], first = 1) {
  if (sent.options) expect(sent.options).toEqual(options);
  else {
    for (const [index, option] of options.entries()) expect(sent.text).toContain(`${first + index} for ${option}`);
  }
}

export const windowContractCases: Record<
  WindowContractCase,
  (setUp: () => Promise<ChannelContractFixture>) => Promise<void>
> = {
  async 'outside the window: text as a template'(setUp) {
    const f = await setUp();
    window(f).close();
    await f.channel.send(outbound({ text: 'Time for your walk.\n\nReply   when   done\tplease' }));
    const [sent] = f.delivered();
    expect(sent?.template).toBeTruthy();
    // One line (132018 / 63013): no newline, no tab, never five spaces in a row.
    expect(sent?.text).toBe('Time for your walk. Reply when done please');
  },

  async 'outside the window: a poll keeps its options'(setUp) {
    const f = await setUp();
    window(f).close();
    await f.channel.send(adaptForChannel(poll('poll_w1', INTENSITY), f.channel));
    const [sent] = f.delivered();
    expect(sent?.template).toBeTruthy();
    expect(sent?.text).toContain(INTENSITY.question);
    expectOptionsPresented(sent ?? { text: '' }, INTENSITY.options);
  },

  async 'outside the window: a prompt and its polls in one template'(setUp) {
    const f = await setUp();
    window(f).close();
    const prompt = outbound({ followUps: [poll('poll_w2', DONE), poll('poll_w3', INTENSITY, 3)] });
    expect(f.channel.templateWindow?.fitsOneTemplate(prompt)).toBe(true);
    await f.channel.send(prompt);
    const delivered = f.delivered();
    expect(delivered).toHaveLength(1);
    expect(delivered[0]?.template).toBeTruthy();
    expect(delivered[0]?.text).toMatch(/^Time for your walk.*Did you do it\?.*How's the intensity\?/);
    expectOptionsPresented(delivered[0] ?? { text: '' }, DONE.options);
    expectOptionsPresented(delivered[0] ?? { text: '' }, INTENSITY.options, 3);
  },

  async 'outside the window: a failed receipt re-sends as a template'(setUp) {
    const f = await setUp();
    const { harness, postWindowFailure } = window(f);
    const ada = await harness.enroll(PHONE);
    let counter = 0;
    const newId = (prefix: string) => `${prefix}_w${++counter}`;
    const messenger = createOutboxMessenger({ store: harness.store, clock: harness.clock, newId });
    await messenger.send(ada.id, { type: 'text', text: 'Time for your walk' }, { kind: 'proactive' });
    await messenger.send(ada.id, { type: 'poll', ...DONE, options: [...DONE.options] }, { kind: 'poll' });
    // Sent free-form (the window looked open), the provider accepting both.
    const sentIds: string[] = [];
    for (const job of await harness.store.jobs.listPending({ kind: 'deliver_message' })) {
      const { message } = job.payload as DeliverMessagePayload;
      const result = await f.channel.send(adaptForChannel(message, f.channel));
      sentIds.push(result.providerMessageId ?? '');
      await harness.store.deliveries.record({
        outboundId: message.id,
        participantId: ada.id,
        channel: f.channel.name,
        providerMessageId: result.providerMessageId ?? '',
        status: 'sent',
        createdAt: harness.clock.now(),
      });
      await harness.store.jobs.cancelById(job.id, harness.clock.now());
    }
    // Then the provider reports both failed: outside the window. One re-send, of both, as one template.
    for (const id of sentIds) expect(await postWindowFailure(id)).toBeLessThan(300);
    const resend = createWindowResendHandler({ store: harness.store, clock: harness.clock, newId, log: silentLog });
    for (const job of await harness.store.jobs.listPending({ kind: 'window_resend' })) await resend(job);
    const queued = await harness.store.jobs.listPending({ kind: 'deliver_message' });
    expect(queued).toHaveLength(1);
    const { message } = (queued[0]?.payload ?? {}) as DeliverMessagePayload;
    expect(message).toMatchObject({ outsideWindow: true, text: 'Time for your walk' });
    expect(message.followUps?.map((followUp) => followUp.poll?.options)).toEqual([DONE.options]);
    const before = f.delivered().length;
    await f.channel.send(message);
    const resent = f.delivered().slice(before);
    expect(resent).toHaveLength(1);
    expect(resent[0]?.template).toBeTruthy();
    expect(resent[0]?.text).toContain('Time for your walk');
    expectOptionsPresented(resent[0] ?? { text: '' }, DONE.options);
  },
};
