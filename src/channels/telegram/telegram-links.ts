/**
 * Deep links that bind a participant's Telegram chat: `https://t.me/<bot>?start=<code>`. Opening one and pressing
 * Start sends `/start <code>` from the chat; the code names the participant once. Codes are random (128 bits, in the
 * characters Telegram allows in a start parameter), stored only as their SHA-256, single use — using one spends the
 * participant's other codes too — and expire after {@link START_CODE_LIFETIME_MS}. A new code is issued each time a
 * link is shown (enrolment, the dashboard): the ones shown earlier stay usable until one of them is used.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../domain/clock.ts';
import type { Store } from '../../store/store.ts';

/** Long enough for a link sent by post or mail; a used or expired one is answered with a request for a new one. */
export const START_CODE_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

export interface TelegramLinks {
  /** A new one-time link for the participant. */
  linkFor(participantId: string): Promise<string>;
  /**
   * Uses the code up and binds the chat to its participant, in one unit of work (the caller's when one is open). The
   * participant's id; undefined when the code is unknown, used or expired (nothing changes).
   */
  bind(code: string, chatId: string): Promise<string | undefined>;
}

export function hashStartCode(code: string): string {
  return createHash('sha256').update(code, 'utf8').digest('hex');
}

export function createTelegramLinks(options: {
  store: Pick<Store, 'telegram' | 'transaction'>;
  clock: Clock;
  /** Known once the channel has started (`getMe`). */
  botUsername: () => string;
  newCode?: () => string;
}): TelegramLinks {
  const { store, clock } = options;
  const newCode = options.newCode ?? (() => randomBytes(16).toString('base64url'));
  return {
    async linkFor(participantId) {
      const code = newCode();
      const now = clock.now();
      await store.telegram.issueStartCode(
        {
          codeHash: hashStartCode(code),
          participantId,
          createdAt: now,
          expiresAt: new Date(now.getTime() + START_CODE_LIFETIME_MS),
        },
        now,
      );
      return `https://t.me/${encodeURIComponent(options.botUsername())}?start=${code}`;
    },
    async bind(code, chatId) {
      // Telegram allows 1–64 of these characters; anything else was never issued here (and is not hashed for nothing).
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(code)) return undefined;
      return store.transaction(async () => {
        const now = clock.now();
        const participantId = await store.telegram.useStartCode(hashStartCode(code), now);
        if (participantId) await store.telegram.linkChat(participantId, chatId, now);
        return participantId;
      });
    },
  };
}
