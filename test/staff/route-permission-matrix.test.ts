/**
 * Route × role: every route of the built application, called as each role (the API with the role's token, the
 * dashboard with its signed-in session and CSRF token), is refused with 403 exactly when the role's row of the
 * permission table lacks the route's permission. The list of routes comes from the app itself, so a new route is
 * in the matrix without editing this test (and a route declaring no permission does not even start, see below).
 */
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeclaredRoute, registerAuth, routesOf } from '../../src/api/auth.ts';
import { createAuthThrottle } from '../../src/api/auth-throttle.ts';
import { ROLE_PERMISSIONS, ROLES, type Role } from '../../src/domain/permissions.ts';
import type { Application } from '../../src/main.ts';
import { createStaffAccess } from '../../src/staff/staff-access.ts';
import { enrollOne, type StaffMember, staffPerRole, startStaffApp } from './staff-harness.ts';

let app: Application;
let members: Record<Role, StaffMember>;
let participantId: string;
let baseUrl: string;

beforeAll(async () => {
  app = await startStaffApp({ listen: true });
  const address = app.server.addresses()[0];
  if (!address || typeof address === 'string') throw new Error('the server is not listening on a TCP port');
  baseUrl = `http://127.0.0.1:${address.port}`;
  members = await staffPerRole(app);
  participantId = await enrollOne(app);
});
afterAll(async () => {
  await app?.stop();
});

/** Left out: sign-out everywhere ends the caller's own sessions (staff-accounts.test.ts checks it). */
const SKIPPED = new Set(['/dashboard/logout-everywhere']);

function concreteUrl(route: DeclaredRoute): string {
  return route.url
    .replace(/\/participants\/:id/, `/participants/${participantId}`)
    .replace(':file', 'participants.csv')
    .replace(/:[A-Za-z]+/g, 'unknown-id');
}

/**
 * Over real HTTP, reading only the status line: an event stream (the live transcript, the alert count) answers its
 * headers at once and never ends, and a refusal is a status like any other.
 */
async function call(route: DeclaredRoute, member: StaffMember): Promise<number> {
  const hasBody = !['GET', 'HEAD', 'DELETE'].includes(route.method);
  const dashboard = route.url.startsWith('/dashboard');
  const headers: Record<string, string> = dashboard
    ? { cookie: member.cookie, 'x-csrf-token': member.csrf }
    : { authorization: `Bearer ${member.token}` };
  if (hasBody) headers['content-type'] = dashboard ? 'application/x-www-form-urlencoded' : 'application/json';
  const response = await fetch(`${baseUrl}${concreteUrl(route)}`, {
    method: route.method,
    headers,
    redirect: 'manual',
    ...(hasBody ? { body: dashboard ? '' : '{}' } : {}),
  });
  await response.body?.cancel();
  return response.status;
}

describe('every route × every role', () => {
  it('covers the API and the dashboard, and every route declares public or a permission', () => {
    const routes = routesOf(app.server);
    expect(routes.some((route) => route.url === '/conversation/participants' && route.method === 'POST')).toBe(true);
    expect(routes.some((route) => route.url === '/dashboard/users')).toBe(true);
    for (const route of routes) expect(route.public || route.permission !== undefined, route.url).toBe(true);
  });

  it('answers 403 exactly when the role lacks the route permission', async () => {
    const routes = routesOf(app.server).filter(
      (route) => !route.public && route.method !== 'HEAD' && !SKIPPED.has(route.url),
    );
    const mismatches: string[] = [];
    let refused = 0;
    for (const route of routes) {
      for (const role of ROLES) {
        const allowed = ROLE_PERMISSIONS[role].includes(route.permission ?? 'admin');
        const status = await call(route, members[role]);
        const ok = allowed ? status !== 403 && status !== 401 : status === 403;
        if (status === 403) refused += 1;
        if (!ok) mismatches.push(`${role} ${route.method} ${route.url} (${route.permission}): ${status}`);
      }
    }
    expect(mismatches).toEqual([]);
    expect(routes.length).toBeGreaterThan(30);
    // Each route has one permission and every permission but identify gates a route some role lacks.
    expect(refused).toBeGreaterThan(routes.length / 2);
  }, 180_000);
});

describe('start-up check', () => {
  it('refuses a route that names neither a permission nor public', async () => {
    const server = Fastify();
    registerAuth(server, {
      access: createStaffAccess({ staff: undefined, apiToken: 'x', idleTimeoutMs: 60_000 }),
      throttle: createAuthThrottle(),
    });
    expect(() => server.get('/forgotten', async () => 'open?')).toThrow(
      'GET /forgotten: a route must declare config.permission',
    );
    expect(() => server.get('/declared', { config: { permission: 'read' } }, async () => 'ok')).not.toThrow();
    await server.close();
  });
});
