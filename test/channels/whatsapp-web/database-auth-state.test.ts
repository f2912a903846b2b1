/**
 * Baileys' auth state in the database: real Baileys credentials (key pairs as Buffers) and Signal keys survive a
 * write and a reload byte for byte, every `set` is written through at once, and `null` deletes.
 */
import { initAuthCreds, proto } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import {
  credsAreLinked,
  loadDatabaseAuthState,
  readLidMapping,
  readStoredCreds,
  writeLidMapping,
} from '../../../src/channels/whatsapp-web/database-auth-state.ts';
import { systemClock } from '../../../src/scheduling/clock.ts';
import { createSqliteStore } from '../../../src/store/sqlite/sqlite-store.ts';

describe('database auth state', () => {
  it('saves fresh Baileys credentials and reloads them identically', async () => {
    const store = await createSqliteStore({ filename: ':memory:' });
    const first = await loadDatabaseAuthState({
      repository: store.whatsappAuth,
      session: 'default',
      clock: systemClock,
    });
    expect(first.isLinked).toBe(false);
    expect(await readStoredCreds(store.whatsappAuth, 'default')).toBeUndefined();
    first.state.creds.me = { id: '15550009999:7@s.whatsapp.net' };
    await first.saveCreds();

    const reloaded = await loadDatabaseAuthState({
      repository: store.whatsappAuth,
      session: 'default',
      clock: systemClock,
    });
    expect(reloaded.isLinked).toBe(true);
    expect(reloaded.state.creds).toEqual(first.state.creds);
    expect(Buffer.isBuffer(reloaded.state.creds.noiseKey.private)).toBe(true);
    expect(credsAreLinked(initAuthCreds())).toBe(false);
    await store.close();
  });

  it('writes keys through, reads Buffers and app-state keys back typed, and deletes on null', async () => {
    const store = await createSqliteStore({ filename: ':memory:' });
    const { state } = await loadDatabaseAuthState({
      repository: store.whatsappAuth,
      session: 'default',
      clock: systemClock,
    });
    const session = Buffer.from([1, 2, 3, 250]);
    await state.keys.set({
      session: { 'peer.0': session },
      'pre-key': { '1': { public: Buffer.alloc(32, 1), private: Buffer.alloc(32, 2) } },
      'app-state-sync-key': { AAAA: { keyData: Buffer.from('key-data'), timestamp: 5 } },
    });
    // Written through: a second, independent load sees it at once.
    const other = await loadDatabaseAuthState({
      repository: store.whatsappAuth,
      session: 'default',
      clock: systemClock,
    });
    const sessions = await other.state.keys.get('session', ['peer.0', 'missing']);
    expect(Buffer.from(sessions['peer.0'] ?? [])).toEqual(session);
    expect(sessions).not.toHaveProperty('missing');
    const preKeys = await other.state.keys.get('pre-key', ['1']);
    expect(preKeys['1']?.private).toEqual(Buffer.alloc(32, 2));
    const appState = await other.state.keys.get('app-state-sync-key', ['AAAA']);
    expect(appState['AAAA']).toBeInstanceOf(proto.Message.AppStateSyncKeyData);

    await state.keys.set({ session: { 'peer.0': null } });
    expect(await other.state.keys.get('session', ['peer.0'])).toEqual({});
    await store.close();
  });

  it('keeps LID mappings in the format Baileys reads', async () => {
    const store = await createSqliteStore({ filename: ':memory:' });
    await writeLidMapping(store.whatsappAuth, 'default', { lidUser: '111222', pnUser: '15550000001' }, new Date());
    expect(await readLidMapping(store.whatsappAuth, 'default', '111222')).toBe('15550000001');
    const { state } = await loadDatabaseAuthState({
      repository: store.whatsappAuth,
      session: 'default',
      clock: systemClock,
    });
    expect(await state.keys.get('lid-mapping', ['15550000001', '111222_reverse'])).toEqual({
      '15550000001': '111222',
      '111222_reverse': '15550000001',
    });
    expect(await readLidMapping(store.whatsappAuth, 'default', '999')).toBeUndefined();
    await store.close();
  });
});
