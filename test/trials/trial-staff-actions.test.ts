/**
 * The trial's staff actions and views with staff accounts, in process: the pause of randomisation through the API and
 * the dashboard (admin only, a reason required, audited with it), and the roster's arm column and filter (kept in the
 * page links with the other filters).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '../../src/domain/permissions.ts';
import type { Application } from '../../src/main.ts';
import { type StaffMember, staffPerRole, startStaffApp } from '../staff/staff-harness.ts';
import { readmeExampleDesign } from '../support/readme-study-design.ts';
import { phoneFor } from './trial-fixture.ts';

let app: Application;
let members: Record<Role, StaffMember>;
let directory = '';

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'promptpipe-trial-staff-'));
  const designFile = join(directory, 'study.yaml');
  await writeFile(designFile, readmeExampleDesign());
  app = await startStaffApp({ environment: { STUDY_DESIGN_FILE: designFile } });
  members = await staffPerRole(app);
});
afterAll(async () => {
  await app?.stop();
  if (directory) await rm(directory, { recursive: true, force: true });
});

const api = (member: StaffMember, method: 'GET' | 'POST', url: string, payload?: object) =>
  app.server.inject({
    method,
    url,
    headers: { authorization: `Bearer ${member.token}` },
    ...(payload ? { payload } : {}),
  });
const page = (member: StaffMember, url: string) =>
  app.server.inject({ method: 'GET', url, headers: { cookie: member.cookie } });
const submit = (member: StaffMember, url: string, values: Record<string, string>) =>
  app.server.inject({
    method: 'POST',
    url,
    headers: { cookie: member.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: member.csrf, ...values }).toString(),
  });

describe('the pause of randomisation', () => {
  it('is an admin action with a reason, audited with who and why, refused otherwise without a change', async () => {
    const state = async () => (await api(members.admin, 'GET', '/study/randomisation')).json().result;
    expect(await state()).toMatchObject({ paused: false, reason: null });

    expect((await api(members.coordinator, 'POST', '/study/randomisation/pause', { reason: 'x' })).statusCode).toBe(
      403,
    );
    expect((await api(members.admin, 'POST', '/study/randomisation/pause', { reason: '  ' })).statusCode).toBe(400);
    expect((await api(members.admin, 'POST', '/study/randomisation/pause', {})).statusCode).toBe(400);
    expect((await api(members.admin, 'POST', '/study/randomisation/resume', { reason: 'go' })).statusCode).toBe(409);
    expect(await state()).toMatchObject({ paused: false });

    const paused = await api(members.admin, 'POST', '/study/randomisation/pause', { reason: 'IRB query on nudges' });
    expect(paused.statusCode).toBe(200);
    expect(paused.json().result).toMatchObject({ paused: true, reason: 'IRB query on nudges' });
    expect(paused.json().result.changed_by).toContain('admin@study.example');
    expect((await api(members.admin, 'POST', '/study/randomisation/pause', { reason: 'again' })).statusCode).toBe(409);

    const [latest] = await app.store.audit.list({}, 10);
    expect(latest).toMatchObject({
      action: 'POST /study/randomisation/pause',
      actorUserId: members.admin.userId,
      outcome: 'failure',
      status: 409,
    });
    const audit = await app.store.audit.list({ actor: members.admin.email }, 100);
    const done = audit.find((row) => row.action === 'POST /study/randomisation/pause' && row.outcome === 'success');
    expect(done?.detail).toBe(JSON.stringify({ reason: 'IRB query on nudges' }));
    const auditPage = await page(members.admin, '/dashboard/audit');
    expect(auditPage.body).toContain('POST /study/randomisation/pause');
    expect(auditPage.body).toContain('IRB query on nudges');

    // The allocation report shows it and resumes it, from the dashboard (admin only).
    const studyPage = await page(members.admin, '/dashboard/study');
    expect(studyPage.body).toMatch(/<p id="randomisation-state">Paused/);
    expect(studyPage.body).toContain('action="/dashboard/study/randomisation/resume"');
    expect((await page(members.coordinator, '/dashboard/study')).statusCode).toBe(403);
    const refused = await submit(members.coordinator, '/dashboard/study/randomisation/resume', { reason: 'no' });
    expect(refused.statusCode).toBe(403);
    const blank = await submit(members.admin, '/dashboard/study/randomisation/resume', { reason: '' });
    expect(blank.statusCode).toBe(400);
    expect(await state()).toMatchObject({ paused: true });
    const resumed = await submit(members.admin, '/dashboard/study/randomisation/resume', { reason: 'IRB answered' });
    expect(resumed.statusCode).toBe(303);
    expect(await state()).toMatchObject({ paused: false, reason: 'IRB answered' });
    expect((await page(members.admin, '/dashboard/study')).body).toMatch(/Resumed .* UTC by .*: IRB answered/);
  });
});

describe('the roster with a trial', () => {
  it('shows each participant\u2019s arm and filters by arm, with the other filters and through the pages', async () => {
    const arms: Record<string, string> = {};
    for (let index = 0; index < 120; index += 1) {
      const participant = await app.participants.enroll(
        { phoneNumber: phoneFor(index), name: `P${String(index).padStart(2, '0')}` },
        { greet: false },
      );
      arms[participant.id] = participant.arm ?? '';
    }
    const inCoach = Object.keys(arms).filter((id) => arms[id] === 'coach');
    const rowsOf = (body: string) =>
      [
        ...body.matchAll(/<tr><td><a href="\/dashboard\/participants\/([^"]+)">[\s\S]*?<td class="arm">([^<]*)<\/td>/g),
      ].map((match) => [match[1] ?? '', match[2] ?? '']);

    const all = await page(members.coordinator, '/dashboard');
    expect(all.body).toContain('<th scope="col">Arm</th>');
    for (const [id, arm] of rowsOf(all.body)) expect(arm).toBe(arms[id ?? '']);

    const filtered = await page(members.coordinator, '/dashboard?arm=coach&status=active');
    expect(filtered.body).toContain(`<p>${inCoach.length} participant(s)</p>`);
    expect(filtered.body).toMatch(/<option value="coach" selected>/);
    const firstPage = rowsOf(filtered.body);
    expect(firstPage.every(([, arm]) => arm === 'coach')).toBe(true);
    // Weight 2 of 4: more than a page of coached participants among 120, so the pager's links keep the filter.
    expect(inCoach.length).toBeGreaterThan(50);
    const next = /<a href="([^"]+)" rel="next">/.exec(filtered.body)?.[1]?.replaceAll('&#38;', '&') ?? '';
    expect(next).toContain('arm=coach');
    expect(next).toContain('status=active');
    const secondPage = rowsOf((await page(members.coordinator, next)).body);
    expect(secondPage.every(([, arm]) => arm === 'coach')).toBe(true);
    expect(new Set([...firstPage, ...secondPage].map(([id]) => id))).toEqual(new Set(inCoach));

    // Combined with another filter: none of them is paused. An unknown arm filters nothing (like the other filters).
    expect((await page(members.coordinator, '/dashboard?arm=coach&status=paused')).body).toContain(
      '<p>0 participant(s)</p>',
    );
    expect((await page(members.coordinator, '/dashboard?arm=nope')).body).toContain('<p>120 participant(s)</p>');
  });
});
