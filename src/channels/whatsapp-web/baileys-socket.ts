/**
 * The real socket: a Baileys WhatsApp Web connection (a linked device of the study's account), adapted to the
 * narrow `WhatsAppSocket` port. Only this file imports the socket half of Baileys.
 */
import {
  type AnyMessageContent,
  Browsers,
  decryptPollVote,
  makeCacheableSignalKeyStore,
  makeWASocket,
} from '@whiskeysockets/baileys';
import type { Log } from '../../domain/log.ts';
import type { PollVoteContext, WhatsAppSocket, WhatsAppSocketFactory } from './whatsapp-socket.ts';

type BaileysLogger = NonNullable<Parameters<typeof makeWASocket>[0]['logger']>;

/**
 * Baileys logs through a pino-like interface, very chattily: its info goes to our debug, and its warnings and errors
 * (decryption failures of single messages, mostly) to our warn.
 */
export function baileysLogger(log: Log, bindings: Record<string, unknown> = { component: 'baileys' }): BaileysLogger {
  const forward =
    (write: (data: Record<string, unknown>, message: string) => void) =>
    (data: unknown, message?: string): void => {
      if (typeof data === 'string') write(bindings, data);
      else write({ ...bindings, ...(data && typeof data === 'object' ? (data as object) : { data }) }, message ?? '');
    };
  return {
    level: 'debug',
    child: (more: Record<string, unknown>) => baileysLogger(log, { ...bindings, ...more }),
    trace: () => undefined,
    debug: () => undefined,
    info: forward((data, message) => log.debug(data, message)),
    warn: forward((data, message) => log.warn(data, message)),
    error: forward((data, message) => log.warn(data, message)),
  };
}

/** Baileys' own poll-vote decryption (`WhatsAppSocket.decryptPollVote`); the fake socket uses it too. */
export function decryptBaileysPollVote(
  vote: { encPayload: Uint8Array; encIv: Uint8Array },
  context: PollVoteContext,
): Uint8Array[] {
  const decoded = decryptPollVote(vote, {
    pollMsgId: context.pollMessageId,
    pollCreatorJid: context.pollCreatorJid,
    voterJid: context.voterJid,
    pollEncKey: context.messageSecret,
  });
  return decoded.selectedOptions ?? [];
}

export const createBaileysSocket: WhatsAppSocketFactory = ({ auth, log }) => {
  const logger = baileysLogger(log);
  const socket = makeWASocket({
    auth: { creds: auth.creds, keys: makeCacheableSignalKeyStore(auth.keys, logger) },
    logger,
    browser: Browsers.ubuntu('PromptPipe'),
    // A study account's phone stays the primary device: do not mark it offline-to-notifications, nor pull history.
    markOnlineOnConnect: false,
    syncFullHistory: false,
  });
  return {
    ev: {
      on(event, listener) {
        socket.ev.on(event, listener as (data: unknown) => void);
      },
    },
    get user() {
      const user = socket.user;
      return user ? { id: user.id, lid: user.lid } : undefined;
    },
    async sendMessage(jid, content) {
      const sent = await socket.sendMessage(jid, content as AnyMessageContent);
      return sent ? { key: sent.key, message: sent.message ?? null } : undefined;
    },
    async sendPresenceUpdate(type, jid) {
      await socket.sendPresenceUpdate(type, jid);
    },
    requestPairingCode: (phoneNumber) => socket.requestPairingCode(phoneNumber),
    logout: () => socket.logout(),
    decryptPollVote: decryptBaileysPollVote,
    end(error) {
      socket.end(error);
    },
  } satisfies WhatsAppSocket;
};
