import { PassThrough } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { createConsoleChannel } from '../../src/channels/console/console-channel.ts';
import { startConsoleChat } from '../../src/channels/console/console-chat.ts';
import type { ChannelInboundMessage, InboundReceipt } from '../../src/inbound/inbound-port.ts';

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: string[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
  return { stream, text: () => chunks.join('') };
}

describe('the console channel', () => {
  it('prints the coach message and has no native polls', async () => {
    const output = capture();
    const delivered: string[] = [];
    const channel = createConsoleChannel({
      output: output.stream,
      onDelivered: (message) => delivered.push(message.id),
    });
    expect(channel.supportsPolls).toBe(false);
    await channel.send({ id: 'out_1', participantId: 'p', to: '+1', kind: 'text', text: 'Hello!\nHow are you?' });
    expect(output.text()).toContain('coach> Hello!\n       How are you?');
    expect(delivered).toEqual(['out_1']);
  });
});

describe('the console chat', () => {
  it('sends each typed line through the inbound pipeline, in order, until /quit', async () => {
    const input = new PassThrough();
    const output = capture();
    const received: ChannelInboundMessage[] = [];
    const chat = startConsoleChat({
      input,
      output: output.stream,
      phoneNumber: '+15551230001',
      inbound: {
        async receive(message): Promise<InboundReceipt> {
          received.push(message);
          return { inboundId: `in_${received.length}`, participantId: 'p', duplicate: false };
        },
        idle: async () => undefined,
      },
    });
    input.write('hello\n\n1\n/quit\n');
    await chat.finished;
    // The lines are handled in a queue that may still be running when the interface closes.
    await vi.waitFor(() => expect(received).toHaveLength(2), { timeout: 10_000 });
    expect(received).toEqual([
      { channel: 'console', from: '+15551230001', text: 'hello' },
      { channel: 'console', from: '+15551230001', text: '1' },
    ]);
    expect(output.text()).toContain('you> ');
  });

  it('waits for the coach before the first prompt when a greeting is on its way', async () => {
    const input = new PassThrough();
    const output = capture();
    const chat = startConsoleChat({
      input,
      output: output.stream,
      phoneNumber: '+15551230001',
      inbound: {
        receive: async () => ({ inboundId: 'in_1', participantId: 'p', duplicate: false }),
        idle: async () => {},
      },
      awaitingCoach: true,
    });
    // readline writes a prompt synchronously: had one been drawn, it would be in the stream after this turn.
    await new Promise((resolve) => setImmediate(resolve));
    expect(output.text()).not.toContain('you>');
    output.stream.write('coach> Hi! Which habit shall we build?\n');
    chat.prompt();
    await vi.waitFor(() => expect(output.text()).toContain('you> '));
    expect(output.text().indexOf('coach> Hi!')).toBeLessThan(output.text().indexOf('you> '));
    input.end();
    await chat.finished;
  });

  it('says so when a message cannot be sent', async () => {
    const input = new PassThrough();
    const output = capture();
    const chat = startConsoleChat({
      input,
      output: output.stream,
      phoneNumber: '+15551230001',
      inbound: {
        receive: async () => {
          throw new Error('no participant is enrolled with phone number +15551230001');
        },
        idle: async () => undefined,
      },
    });
    input.write('hi\n');
    await vi.waitFor(
      () => expect(output.text()).toContain('(not sent: no participant is enrolled with phone number +15551230001)'),
      { timeout: 10_000 },
    );
    input.end();
    await chat.finished;
  });
});
