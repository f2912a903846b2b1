/** An application with one staff account per role, each with a session cookie, a CSRF token and an API token. */
import pino from 'pino';
import { expect } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ROLES, type Role } from '../../src/domain/permissions.ts';
import { type Application, createApplication } from '../../src/main.ts';
import { createStaffService } from '../../src/staff/staff-service.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

export const API_TOKEN = 'staff-harness-api-token';
export const PASSWORD = 'correct horse battery staple';

export interface StaffMember {
  role: Role;
  email: string;
  userId: string;
  cookie: string;
  csrf: string;
  token: string;
}

export const cookieOf = (setCookie: string | string[] | undefined): string =>
  String([setCookie].flat()[0]).split(';')[0] ?? '';
export const csrfOf = (page: string): string => /name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? '';

export async function startStaffApp(
  options: {
    wallClock?: () => number;
    environment?: Record<string, string>;
    logLines?: string[];
    /** A database file instead of memory (to read its bytes). */
    filename?: string;
    /** Listen on an ephemeral loopback port (real HTTP requests, e.g. to read an endless stream's status). */
    listen?: boolean;
  } = {},
): Promise<Application> {
  const config = loadConfig({
    API_ADDR: '127.0.0.1:0',
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00Z',
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    EXPORT_PSEUDONYM_KEY: 'staff-harness-pseudonym-key',
    LOG_LEVEL: 'silent',
    ...options.environment,
  });
  const app = await createApplication({
    config,
    // Every log line kept when asked: a test can then prove no secret was ever logged.
    log: options.logLines
      ? pino({ level: 'trace' }, { write: (line: string) => options.logLines?.push(line) })
      : pino({ level: 'silent' }),
    store: await createSqliteStore({ filename: options.filename ?? ':memory:' }),
    ...(options.wallClock ? { wallClock: options.wallClock } : {}),
  });
  await app.start({ listen: options.listen ?? false });
  return app;
}

/** The harness's wall clock: what the app's sessions, lockouts and token expiry read. */
let wallNow: () => Date = () => new Date();
export function useWallClock(now: () => number): void {
  wallNow = () => new Date(now());
}

export async function signIn(app: Application, email: string, password = PASSWORD) {
  return app.server.inject({
    method: 'POST',
    url: '/dashboard/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ email, password }).toString(),
  });
}

/** One account per role, signed in, each with an admin-scoped token (its permissions are then its role's). */
export async function staffPerRole(app: Application): Promise<Record<Role, StaffMember>> {
  const accounts = createStaffService({ staff: app.store.staff, now: wallNow });
  const members: Partial<Record<Role, StaffMember>> = {};
  for (const role of ROLES) {
    const email = `${role}@study.example`;
    const user = await accounts.createWithPassword({ email, displayName: `The ${role}`, role, password: PASSWORD });
    const { token } = await accounts.createToken({ userId: user.id, name: `${role} script`, scope: 'admin' });
    const signedIn = await signIn(app, email);
    expect(signedIn.statusCode).toBe(303);
    const cookie = cookieOf(signedIn.headers['set-cookie']);
    const page = await app.server.inject({ method: 'GET', url: '/dashboard/tokens', headers: { cookie } });
    expect(page.statusCode).toBe(200);
    members[role] = { role, email, userId: user.id, cookie, csrf: csrfOf(page.body), token };
  }
  return members as Record<Role, StaffMember>;
}

export async function enrollOne(app: Application, phone = '+15551234567', name = 'Ada Lovelace'): Promise<string> {
  const response = await app.server.inject({
    method: 'POST',
    url: '/conversation/participants',
    headers: { authorization: `Bearer ${API_TOKEN}` },
    payload: { phone_number: phone, name },
  });
  expect(response.statusCode).toBe(201);
  return response.json().result.id;
}
