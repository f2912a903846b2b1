/**
 * The telegram part of the store contract (start codes, chats, sent messages and polls). Called from
 * `describeStoreContract`, so it runs on every adapter.
 */
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.ts';
import { participantFixture } from '../support/participant-fixture.ts';

const BASE = Date.parse('2025-03-01T08:00:00.000Z');
const at = (minutes: number): Date => new Date(BASE + minutes * 60_000 + 123);

async function enrol(store: Store, id: string, phone: string): Promise<void> {
  await store.participants.create(participantFixture(id, phone, at(0), { channel: 'telegram' }));
}

export function describeTelegramStoreContract(current: () => Store): void {
  describe('telegram', () => {
    it('uses a start code once, before it expires, and spends the participant’s other codes with it', async () => {
      const store = current();
      await enrol(store, 'tg_1', '+15550000101');
      const issue = (codeHash: string, expiresAt: Date) =>
        store.telegram.issueStartCode({ codeHash, participantId: 'tg_1', createdAt: at(0), expiresAt }, at(0));
      await issue('hash-a', at(60));
      await issue('hash-b', at(60));
      await issue('hash-old', at(5));

      expect(await store.telegram.useStartCode('hash-old', at(5))).toBeUndefined();
      expect(await store.telegram.useStartCode('hash-unknown', at(1))).toBeUndefined();
      expect(await store.telegram.useStartCode('hash-a', at(1))).toBe('tg_1');
      expect(await store.telegram.useStartCode('hash-a', at(2))).toBeUndefined();
      expect(await store.telegram.useStartCode('hash-b', at(2))).toBeUndefined();
    });

    it('binds one chat per participant and one participant per chat', async () => {
      const store = current();
      await enrol(store, 'tg_1', '+15550000101');
      await enrol(store, 'tg_2', '+15550000102');
      await store.telegram.linkChat('tg_1', '1001', at(1));
      expect(await store.telegram.chatOf('tg_1')).toBe('1001');
      expect(await store.telegram.participantOfChat('1001')).toBe('tg_1');

      // The participant moves to another Telegram account: the old chat is no longer theirs.
      await store.telegram.linkChat('tg_1', '1002', at(2));
      expect(await store.telegram.participantOfChat('1001')).toBeUndefined();
      // The chat is bound by another participant's code: it belongs to that one only.
      await store.telegram.linkChat('tg_2', '1002', at(3));
      expect(await store.telegram.chatOf('tg_1')).toBeUndefined();
      expect(await store.telegram.participantOfChat('1002')).toBe('tg_2');
    });

    it('records sent messages once and finds a poll by Telegram’s poll id', async () => {
      const store = current();
      await enrol(store, 'tg_1', '+15550000101');
      await store.telegram.recordSent({
        outboundId: 'out_1',
        participantId: 'tg_1',
        chatId: '1001',
        messageId: '7',
        createdAt: at(1),
      });
      const poll = { pollId: '5432101', question: 'Did you do it?', options: ['Done', 'Next time'] };
      const sentPoll = { outboundId: 'out_2', participantId: 'tg_1', chatId: '1001', messageId: '8', poll };
      await store.telegram.recordSent({ ...sentPoll, createdAt: at(2) });
      await store.telegram.recordSent({ ...sentPoll, messageId: '9', createdAt: at(3) });

      expect(await store.telegram.sentByOutboundId('out_1')).toEqual({
        outboundId: 'out_1',
        participantId: 'tg_1',
        chatId: '1001',
        messageId: '7',
        createdAt: at(1),
      });
      expect(await store.telegram.sentPoll('5432101')).toEqual({ ...sentPoll, createdAt: at(2) });
      expect(await store.telegram.sentPoll('unknown')).toBeUndefined();
    });

    it('keeps the chat of a deleted participant (the unregister notice still reaches it) but not their codes', async () => {
      const store = current();
      await enrol(store, 'tg_1', '+15550000101');
      await store.telegram.issueStartCode(
        { codeHash: 'hash-a', participantId: 'tg_1', createdAt: at(0), expiresAt: at(60) },
        at(0),
      );
      await store.telegram.linkChat('tg_1', '1001', at(1));
      await store.participants.delete('tg_1');
      expect(await store.telegram.chatOf('tg_1')).toBe('1001');
      expect(await store.telegram.useStartCode('hash-a', at(2))).toBeUndefined();
    });
  });
}
