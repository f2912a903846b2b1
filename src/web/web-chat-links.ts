/**
 * The private web-chat links. A token is 32 random bytes (256 bits, base64url): unguessable, and the only
 * credential of the chat page. Revoking issues a new token and the old link stops working at once: the chat routes
 * listen (`onRevoked`) and close the streams the old link still has open.
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import type { Store } from '../store/store.ts';

export const CHAT_PATH_PREFIX = '/chat/';

export interface WebChatLinks {
  /** The participant's active link path (`/chat/<token>`), issuing a token on first use. */
  pathFor(participantId: string): Promise<string>;
  /** Revokes the current link and returns the new one. */
  renew(participantId: string): Promise<string>;
  /** The participant id behind a token that is still active. */
  resolve(token: string): Promise<string | undefined>;
  revoke(participantId: string): Promise<void>;
  /**
   * Tells the listeners that the participant's links were revoked elsewhere: deleting a participant revokes them in
   * the deletion's own transaction (participant-service.ts).
   */
  revoked(participantId: string): void;
  /** Calls `listener` with the participant's id when their links are revoked in this process; returns its removal. */
  onRevoked(listener: (participantId: string) => void): () => void;
}

export function createWebChatLinks(options: { store: Pick<Store, 'webChatTokens'>; clock: Clock }): WebChatLinks {
  const { store, clock } = options;
  const listeners = new Set<(participantId: string) => void>();
  const newToken = (): string => randomBytes(32).toString('base64url');
  const path = (token: string): string => `${CHAT_PATH_PREFIX}${token}`;
  const announce = (participantId: string): void => {
    for (const listener of listeners) listener(participantId);
  };
  return {
    async pathFor(participantId) {
      const active = await store.webChatTokens.getActive(participantId);
      if (active) return path(active.token);
      return path((await store.webChatTokens.issue(participantId, newToken(), clock.now())).token);
    },
    async renew(participantId) {
      const renewed = path((await store.webChatTokens.issue(participantId, newToken(), clock.now())).token);
      announce(participantId);
      return renewed;
    },
    async resolve(token) {
      if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return undefined;
      const found = await store.webChatTokens.find(token);
      return found && found.revokedAt === undefined ? found.participantId : undefined;
    },
    async revoke(participantId) {
      await store.webChatTokens.revokeAll(participantId, clock.now());
      announce(participantId);
    },
    revoked: announce,
    onRevoked(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
