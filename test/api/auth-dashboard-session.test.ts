/**
 * The one rule by which the API accepts the dashboard's session: on GET/HEAD routes marked `dashboardSession`, a
 * signed-in session instead of the bearer token; marking a state-changing route is refused when it is registered.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { registerAuth } from '../../src/api/auth.ts';
import { createAuthThrottle } from '../../src/api/auth-throttle.ts';
import { API_TOKEN_ACTOR, createStaffAccess } from '../../src/staff/staff-access.ts';

const TOKEN = 'session-rule-token';
let app: FastifyInstance | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** "Signed in" is a header here: what matters is the rule, not how sessions are kept (staff-access.ts). */
const signedIn = (request: FastifyRequest) => request.headers['x-test-session'] === 'signed-in';

function server(): FastifyInstance {
  const instance = Fastify();
  const access = {
    ...createStaffAccess({ staff: undefined, apiToken: TOKEN, idleTimeoutMs: 60_000 }),
    fromSession: async (request: FastifyRequest) => (signedIn(request) ? API_TOKEN_ACTOR : undefined),
  };
  registerAuth(instance, { access, throttle: createAuthThrottle() });
  return instance;
}

describe('dashboardSession routes', () => {
  it('accept a signed-in session or the token on a marked read, and only the token elsewhere', async () => {
    app = server();
    app.get('/marked', { config: { dashboardSession: true, permission: 'read' } }, async () => 'data');
    app.get('/unmarked', { config: { permission: 'read' } }, async () => 'data');
    const call = (url: string, headers: Record<string, string>, method: 'GET' | 'HEAD' = 'GET') =>
      (app as FastifyInstance).inject({ method, url, headers }).then((response) => response.statusCode);

    expect(await call('/marked', { 'x-test-session': 'signed-in' })).toBe(200);
    expect(await call('/marked', { 'x-test-session': 'signed-in' }, 'HEAD')).toBe(200);
    expect(await call('/marked', { authorization: `Bearer ${TOKEN}` })).toBe(200);
    expect(await call('/marked', {})).toBe(401);
    expect(await call('/marked', { 'x-test-session': 'anonymous' })).toBe(401);
    expect(await call('/unmarked', { 'x-test-session': 'signed-in' })).toBe(401);
    expect(await call('/unmarked', { authorization: `Bearer ${TOKEN}` })).toBe(200);
  });

  it('refuses to mark a state-changing route', async () => {
    app = server();
    expect(() =>
      app?.post('/write', { config: { dashboardSession: true, permission: 'write' } }, async () => 'written'),
    ).toThrow('POST /write: only GET and HEAD routes may accept the dashboard session');
    expect(() =>
      app?.route({
        method: ['GET', 'DELETE'],
        url: '/mixed',
        config: { dashboardSession: true, permission: 'write' },
        handler: async () => 'gone',
      }),
    ).toThrow('DELETE /mixed');
  });
});
