/**
 * The audit trail (one row per action, refused ones included) and pseudonymisation (a viewer never receives a phone
 * number or a participant's name, in the API or on a page), in process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/domain/permissions.ts';
import type { Application } from '../../src/main.ts';
import { maskPhone } from '../../src/staff/pseudonymise.ts';
import { enrollOne, type StaffMember, staffPerRole, startStaffApp } from './staff-harness.ts';

const PHONE = '+15551234567';
let app: Application;
let members: Record<Role, StaffMember>;
let participantId: string;

beforeAll(async () => {
  app = await startStaffApp();
  members = await staffPerRole(app);
  participantId = await enrollOne(app, PHONE, 'Ada Lovelace');
});
afterAll(async () => {
  await app?.stop();
});

const api = (member: StaffMember, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  app.server.inject({
    method,
    url,
    headers: { authorization: `Bearer ${member.token}` },
    ...(payload ? { payload } : {}),
  });

describe('pseudonymisation', () => {
  it('masks phone numbers and hides names for a viewer on every participant read, API and dashboard', async () => {
    const viewer = members.viewer;
    const reads = [
      await api(viewer, 'GET', '/conversation/participants'),
      await api(viewer, 'GET', `/conversation/participants/${participantId}`),
      await api(viewer, 'GET', `/conversation/participants/${participantId}/history`),
      await api(viewer, 'GET', `/conversation/participants/${participantId}/state`),
      await api(viewer, 'GET', '/responses'),
    ];
    for (const page of ['/dashboard', `/dashboard/participants/${participantId}`, '/dashboard/overview']) {
      reads.push(await app.server.inject({ method: 'GET', url: page, headers: { cookie: viewer.cookie } }));
    }
    for (const response of reads) {
      expect(response.statusCode, response.body.slice(0, 200)).toBe(200);
      expect(response.body).not.toContain(PHONE);
      expect(response.body).not.toContain('5551234567');
      expect(response.body).not.toContain('Lovelace');
    }
    const listed = ((reads[0]?.json() ?? { result: [] }) as { result: Record<string, unknown>[] }).result[0] ?? {};
    expect(listed.phone_number).toBe(maskPhone(PHONE));
    expect(listed.phone_number).toBe('+1555•••4567');
    expect(listed).not.toHaveProperty('name');
  });

  it('shows phone numbers and names to a coordinator', async () => {
    const response = await api(members.coordinator, 'GET', `/conversation/participants/${participantId}`);
    expect(response.json().result).toMatchObject({ phone_number: PHONE, name: 'Ada Lovelace' });
    const page = await app.server.inject({
      method: 'GET',
      url: '/dashboard',
      headers: { cookie: members.coordinator.cookie },
    });
    expect(page.body).toContain(PHONE);
  });

  it('gives a researcher pseudonymised exports only', async () => {
    const response = await api(members.researcher, 'GET', '/export/participants.csv');
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain(PHONE);
    expect(response.body).toContain('pn_');
  });
});

describe('audit trail', () => {
  it('records one row per action with who, what, which participant, from where and the outcome, refusals included', async () => {
    const before = (await app.store.audit.list({}, 10_000)).length;
    const done = await api(members.coordinator, 'POST', `/conversation/participants/${participantId}/transition`, {
      to: 'INTAKE',
    });
    const refused = await api(members.viewer, 'DELETE', `/conversation/participants/${participantId}`);
    expect(refused.statusCode).toBe(403);
    const exported = await api(members.admin, 'GET', '/export/participants.csv');
    expect(exported.statusCode).toBe(200);

    const rows = (await app.store.audit.list({}, 10_000)).slice(0, 3).reverse();
    expect((await app.store.audit.list({}, 10_000)).length).toBe(before + 3);
    const tokenOf = (member: StaffMember) => `token:${/^pp_([a-z0-9]+)_/.exec(member.token)?.[1]} ${member.email}`;
    expect(rows[0]).toMatchObject({
      actor: tokenOf(members.coordinator),
      actorUserId: members.coordinator.userId,
      action: 'POST /conversation/participants/:id/transition',
      participantId,
      address: '127.0.0.1',
      outcome: done.statusCode < 400 ? 'success' : 'failure',
      status: done.statusCode,
    });
    expect(rows[1]).toMatchObject({
      actor: tokenOf(members.viewer),
      action: 'DELETE /conversation/participants/:id',
      participantId,
      outcome: 'denied',
      status: 403,
    });
    expect(rows[2]).toMatchObject({ action: 'GET /export/:file', outcome: 'success', status: 200 });
  });

  it('records a view of the roster, a bulk read of participant data, and not a single participant page', async () => {
    const cookie = members.coordinator.cookie;
    const before = await app.store.audit.list({ actor: members.coordinator.email }, 1000);
    await app.server.inject({ method: 'GET', url: '/dashboard', headers: { cookie } });
    await app.server.inject({ method: 'GET', url: `/dashboard/participants/${participantId}`, headers: { cookie } });
    const after = await app.store.audit.list({ actor: members.coordinator.email }, 1000);
    expect(after.length).toBe(before.length + 1);
    expect(after[0]).toMatchObject({ action: 'GET /dashboard', outcome: 'success', status: 200 });
  });

  it('is admin-only on the dashboard and in the export, and filters by participant', async () => {
    const forViewer = await app.server.inject({
      method: 'GET',
      url: '/dashboard/audit',
      headers: { cookie: members.viewer.cookie },
    });
    expect(forViewer.statusCode).toBe(403);
    const researcherExport = await api(members.researcher, 'GET', '/export/audit.csv');
    expect(researcherExport.statusCode).toBe(403);
    const page = await app.server.inject({
      method: 'GET',
      url: `/dashboard/audit?participant=${participantId}`,
      headers: { cookie: members.admin.cookie },
    });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('POST /conversation/participants/:id/transition');
    expect(page.body).not.toContain('sign-in</code>');
    const csv = await api(members.admin, 'GET', '/export/audit.csv');
    expect(csv.statusCode).toBe(200);
    expect(csv.body.split('\n')[0]).toBe(
      'audit_id,at,actor,actor_user_id,actor_token_id,action,participant_id,address,outcome,status,detail',
    );
    expect(csv.body).toContain('DELETE /conversation/participants/:id');
  });
});
