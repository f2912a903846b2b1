/**
 * The terminal conversation of `promptpipe chat --phone …`: each typed line goes through the same inbound pipeline
 * as a webhook message (recorded, then processed by the engine with the configured LLM); the replies come back
 * through the console channel. `/quit` (or Ctrl-D) ends the session.
 */
import { createInterface } from 'node:readline';
import { errorMessage } from '../../domain/errors.ts';
import type { InboundService } from '../../inbound/inbound-port.ts';
import { CONSOLE_CHANNEL } from './console-channel.ts';

export interface ConsoleChatOptions {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** E.164 phone number of the participant being played. */
  phoneNumber: string;
  inbound: Pick<InboundService, 'receive' | 'idle'>;
  /**
   * A coach message (the greeting) is on its way: the first `you> ` waits for it (its delivery calls `prompt()`), so
   * the prompt never sits above the greeting.
   */
  awaitingCoach?: boolean;
}

export interface ConsoleChat {
  /** Re-draws the input prompt (after a coach message). */
  prompt(): void;
  /** Resolves when the person quits. */
  readonly finished: Promise<void>;
}

export function startConsoleChat(options: ConsoleChatOptions): ConsoleChat {
  const { output, inbound, phoneNumber } = options;
  const lines = createInterface({ input: options.input, output, terminal: 'isTTY' in output && Boolean(output.isTTY) });
  lines.setPrompt('you> ');
  let closed = false;
  const finished = new Promise<void>((resolve) => {
    lines.on('close', () => {
      closed = true;
      resolve();
    });
  });
  // Lines are handled one at a time, in order, like messages from one phone.
  let queue = Promise.resolve();
  lines.on('line', (line) => {
    const text = line.trim();
    if (text === '/quit' || text === '/exit') {
      lines.close();
      return;
    }
    if (!text) {
      lines.prompt();
      return;
    }
    queue = queue.then(async () => {
      try {
        await inbound.receive({ channel: CONSOLE_CHANNEL, from: phoneNumber, text });
        await inbound.idle();
      } catch (error) {
        output.write(`(not sent: ${errorMessage(error)})\n`);
        if (!closed) lines.prompt();
      }
    });
  });
  if (!options.awaitingCoach) lines.prompt();
  return {
    prompt: () => {
      if (!closed) lines.prompt(true);
    },
    finished,
  };
}
