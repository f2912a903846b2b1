/**
 * The staff port (accounts, sessions, tokens) and the audit trail on both databases: the same contract on SQLite and,
 * with PROMPTPIPE_TEST_PG_URL, on PostgreSQL (several instances share sessions through it).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { StaffUser } from '../../src/store/staff-store.ts';
import type { Store } from '../../src/store/store.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
const schemas: string[] = [];
const runId = randomBytes(4).toString('hex');

afterAll(async () => {
  if (!url || schemas.length === 0) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const schema of schemas) await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
});

const AT = new Date('2026-03-02T09:00:00.000Z');
const later = (minutes: number) => new Date(AT.getTime() + minutes * 60_000);

function user(id: string, overrides: Partial<StaffUser> = {}): StaffUser {
  return {
    id,
    email: `${id}@study.example`,
    displayName: id,
    role: 'viewer',
    canIdentify: false,
    passwordHash: 'scrypt$hash',
    inviteHash: undefined,
    inviteExpiresAt: undefined,
    failedSignIns: 0,
    lockedUntil: undefined,
    createdAt: AT,
    deactivatedAt: undefined,
    ...overrides,
  };
}

function describeStaffContract(name: string, open: () => Promise<Store>): void {
  describe(name, () => {
    let store: Store | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    it('keeps accounts: unique e-mail, patches that clear, counted failures, active admins', async () => {
      store = await open();
      const { staff } = store;
      expect(await staff.anyUser()).toBe(false);
      await staff.createUser(user('ada', { role: 'admin', inviteHash: 'invite-digest', inviteExpiresAt: later(60) }));
      await expect(staff.createUser(user('ada'))).rejects.toMatchObject({ code: 'conflict' });
      expect(await staff.anyUser()).toBe(true);
      expect(await staff.getUserByInviteHash('invite-digest')).toMatchObject({ id: 'ada', inviteExpiresAt: later(60) });
      expect(await staff.recordFailedSignIn('ada')).toBe(1);
      expect(await staff.recordFailedSignIn('ada')).toBe(2);
      await staff.updateUser('ada', { inviteHash: undefined, inviteExpiresAt: undefined, lockedUntil: later(15) });
      expect(await staff.getUser('ada')).toMatchObject({
        inviteHash: undefined,
        inviteExpiresAt: undefined,
        lockedUntil: later(15),
        failedSignIns: 2,
        role: 'admin',
      });
      await staff.createUser(user('bo', { role: 'admin', canIdentify: true }));
      expect(await staff.countActiveAdmins()).toBe(2);
      await staff.updateUser('bo', { deactivatedAt: later(1) });
      expect(await staff.countActiveAdmins()).toBe(1);
      expect((await staff.getUserByEmail('bo@study.example'))?.canIdentify).toBe(true);
      expect((await staff.listUsers()).map((listed) => listed.id)).toEqual(['ada', 'bo']);
      expect(await staff.updateUser('nobody', { role: 'viewer' })).toBe(false);
    });

    it('keeps sessions and tokens: sign-out everywhere, expiry sweep, revocation once', async () => {
      store = await open();
      const { staff } = store;
      await staff.createUser(user('ada'));
      const session = (idHash: string, userId: string | undefined, lastUsedAt: Date) => ({
        idHash,
        userId,
        signedIn: true,
        csrfToken: `csrf-${idHash}`,
        createdAt: AT,
        lastUsedAt,
      });
      await staff.createSession(session('s1', 'ada', AT));
      await staff.createSession(session('s2', 'ada', later(30)));
      await staff.createSession(session('s3', undefined, later(30)));
      await staff.touchSession('s1', later(40));
      expect(await staff.getSession('s1')).toMatchObject({
        userId: 'ada',
        lastUsedAt: later(40),
        csrfToken: 'csrf-s1',
      });
      expect(await staff.deleteSessionsUnusedSince(later(35))).toBe(2);
      expect(await staff.getSession('s3')).toBeUndefined();
      expect(await staff.deleteSessionsOfUser('ada')).toBe(1);
      expect(await staff.getSession('s1')).toBeUndefined();

      const token = {
        id: 'tok1',
        userId: 'ada',
        name: 'script',
        scope: 'export' as const,
        secretHash: 'digest',
        createdAt: AT,
        expiresAt: later(60),
        revokedAt: undefined,
        lastUsedAt: undefined,
      };
      await staff.createToken(token);
      await staff.createToken({ ...token, id: 'tok2', userId: 'bo', createdAt: later(1), expiresAt: undefined });
      expect((await staff.listTokens()).map((listed) => listed.id)).toEqual(['tok2', 'tok1']);
      expect((await staff.listTokens('ada')).map((listed) => listed.id)).toEqual(['tok1']);
      expect(await staff.revokeToken('tok1', later(5))).toBe(true);
      expect(await staff.revokeToken('tok1', later(6))).toBe(false);
      await staff.touchToken('tok2', later(7));
      expect(await staff.getToken('tok1')).toMatchObject({
        revokedAt: later(5),
        scope: 'export',
        expiresAt: later(60),
      });
      expect(await staff.getToken('tok2')).toMatchObject({ lastUsedAt: later(7), expiresAt: undefined });
    });

    it('appends to the audit trail and reads it filtered, newest first or in keyset pages', async () => {
      store = await open();
      const entry = (minutes: number, actor: string, action: string, participantId?: string) => ({
        at: later(minutes),
        actor,
        actorUserId: undefined,
        actorTokenId: undefined,
        action,
        participantId,
        address: '127.0.0.1',
        outcome: 'success' as const,
        status: 200,
        detail: undefined,
      });
      await store.audit.append(entry(1, 'ada@study.example', 'sign-in'));
      await store.audit.append(entry(2, 'token:abc 50%_off@study.example', 'POST /x/:id', 'p1'));
      await store.audit.append(entry(3, 'Bo@study.example', 'DELETE /x/:id', 'p2'));
      const actions = (entries: { action: string }[]) => entries.map((listed) => listed.action);
      expect(actions(await store.audit.list({}, 10))).toEqual(['DELETE /x/:id', 'POST /x/:id', 'sign-in']);
      expect(actions(await store.audit.list({ actor: 'bo@' }, 10))).toEqual(['DELETE /x/:id']);
      // `%` and `_` are text, not wildcards.
      expect(actions(await store.audit.list({ actor: '50%_' }, 10))).toEqual(['POST /x/:id']);
      expect(actions(await store.audit.list({ actor: '5%f' }, 10))).toEqual([]);
      expect(actions(await store.audit.list({ participantId: 'p2' }, 10))).toEqual(['DELETE /x/:id']);
      expect(actions(await store.audit.list({ from: later(2), to: later(3) }, 10))).toEqual(['POST /x/:id']);
      const [first] = await store.audit.page({}, undefined, 1);
      expect(first).toMatchObject({ action: 'sign-in', at: later(1), status: 200, participantId: undefined });
      expect(actions(await store.audit.page({}, first?.id, 10))).toEqual(['POST /x/:id', 'DELETE /x/:id']);
    });
  });
}

describeStaffContract('sqlite', () => createSqliteStore({ filename: ':memory:' }));

describe.skipIf(!url)('postgres', () => {
  describeStaffContract('postgres', () => {
    const schema = `promptpipe_staff_${runId}_${schemas.length + 1}`;
    schemas.push(schema);
    return createPostgresStore({ connectionString: url ?? '', schema });
  });
});
