/** "Typing…" in the participant's chat from the moment a message is accepted until the reply is sent (or a timeout). */
import type { WhatsAppSocket } from './whatsapp-socket.ts';

export interface TypingIndicator {
  start(socket: WhatsAppSocket, jid: string): void;
  stop(jid: string): void;
  stopAll(): void;
}

export function createTypingIndicator(options: {
  timeoutMs: number;
  /** The open connection when the timeout ends, if any. */
  openSocket: () => WhatsAppSocket | undefined;
}): TypingIndicator {
  const typing = new Map<string, NodeJS.Timeout>();
  function stop(jid: string): void {
    clearTimeout(typing.get(jid));
    typing.delete(jid);
  }
  return {
    start(socket, jid) {
      stop(jid);
      void socket.sendPresenceUpdate('composing', jid).catch(() => undefined);
      typing.set(
        jid,
        setTimeout(() => {
          typing.delete(jid);
          void options
            .openSocket()
            ?.sendPresenceUpdate('paused', jid)
            .catch(() => undefined);
        }, options.timeoutMs),
      );
    },
    stop,
    stopAll() {
      for (const jid of [...typing.keys()]) stop(jid);
    },
  };
}
