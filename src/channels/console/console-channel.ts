/**
 * The console channel (`npm run chat`): the coach's messages are printed to the terminal. It has no native polls,
 * so polls arrive as numbered lists, and typing a number or an option answers them.
 */
import type { Channel, DeliveryResult, OutboundMessage } from '../channel.ts';

export const CONSOLE_CHANNEL = 'console';

export interface ConsoleChannelOptions {
  output: NodeJS.WritableStream;
  /** Called after each message is printed (the chat re-draws its prompt). */
  onDelivered?: (message: OutboundMessage) => void;
}

export function createConsoleChannel(options: ConsoleChannelOptions): Channel {
  return {
    name: CONSOLE_CHANNEL,
    supportsPolls: false,
    async send(message): Promise<DeliveryResult> {
      const indented = message.text.split('\n').join('\n       ');
      // Clear the half-typed prompt line first, so the coach's message does not land in the middle of it.
      options.output.write(`\r\x1b[K\ncoach> ${indented}\n\n`);
      options.onDelivered?.(message);
      return {};
    },
  };
}
