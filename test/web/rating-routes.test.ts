/**
 * Human ratings through the dashboard: a coordinator rates a participant's conversation (a whole one and one coach
 * turn) with the shipped rubric and sees the ratings on the page; the ratings are stored with the rater; a viewer
 * sees the page but may not rate (and the participant page links to it only for those who may); a score off the
 * scale is refused and stores nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { participantConversation } from '../../src/store/ratings-records.ts';
import { enrollOne, type StaffMember, staffPerRole, startStaffApp } from '../staff/staff-harness.ts';

let app: Application;
let staff: Record<'admin' | 'coordinator' | 'researcher' | 'viewer', StaffMember>;
let participantId: string;

beforeEach(async () => {
  app = await startStaffApp();
  staff = await staffPerRole(app);
  participantId = await enrollOne(app);
  await app.store.transcript.append([
    {
      participantId,
      role: 'assistant',
      kind: 'reply',
      content: 'Which habit would you like to build?',
      createdAt: app.clock.now(),
    },
    { participantId, role: 'user', kind: 'message', content: 'Walking', createdAt: app.clock.now() },
  ]);
});
afterEach(() => app.stop());

function post(member: StaffMember, form: Record<string, string>) {
  return app.server.inject({
    method: 'POST',
    url: `/dashboard/participants/${participantId}/ratings`,
    headers: { cookie: member.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ _csrf: member.csrf, ...form }).toString(),
  });
}

const page = (member: StaffMember) =>
  app.server.inject({
    method: 'GET',
    url: `/dashboard/participants/${participantId}/rate`,
    headers: { cookie: member.cookie },
  });

describe('rating a conversation in the dashboard', () => {
  it('stores a coordinator’s ratings with the rubric and shows them on the page', async () => {
    const before = await page(staff.coordinator);
    expect(before.statusCode).toBe(200);
    expect(before.body).toContain('Empathy and respect');
    expect(before.body).toContain('Which habit would you like to build?');
    const turn = (await app.store.transcript.list(participantId)).find((entry) => entry.role === 'assistant')?.id;

    const saved = await post(staff.coordinator, { score_empathy: '4', score_clarity: '5', comment: 'kind and short' });
    expect(saved.statusCode).toBe(303);
    expect(saved.headers.location).toContain(`/dashboard/participants/${participantId}/rate?done=`);
    expect((await post(staff.coordinator, { turn: String(turn), score_clarity: '2' })).statusCode).toBe(303);

    const ratings = await app.store.ratings.list({ conversation: participantConversation(participantId) });
    // One submission's criteria share a time: their order among themselves is not part of the contract.
    const byCriterionAndScore = (a: { criterion: string; score: number }, b: { criterion: string; score: number }) =>
      a.criterion.localeCompare(b.criterion) || a.score - b.score;
    expect(
      ratings
        .map(({ criterion, score, transcriptEntryId, comment }) => ({ criterion, score, transcriptEntryId, comment }))
        .sort(byCriterionAndScore),
    ).toEqual(
      [
        { criterion: 'empathy', score: 4, transcriptEntryId: undefined, comment: 'kind and short' },
        { criterion: 'clarity', score: 5, transcriptEntryId: undefined, comment: 'kind and short' },
        { criterion: 'clarity', score: 2, transcriptEntryId: turn, comment: undefined },
      ].sort(byCriterionAndScore),
    );
    expect(new Set(ratings.map((rating) => rating.rater)).size).toBe(1);
    expect(ratings[0]?.rater).not.toBe('PROMPTPIPE_API_TOKEN');
    expect(ratings[0]?.rubric).toBe('PromptPipe coaching quality');
    expect(await app.store.events.list({ participantId, type: 'conversation-rated' })).toHaveLength(2);
    const after = await page(staff.coordinator);
    expect(after.body).toMatch(/<td>empathy<\/td><td>4<\/td><td>kind and short<\/td>/);
    expect(after.body).toContain(`<td>#${turn}</td><td>clarity</td><td>2</td>`);
  });

  it('links the participant page to the rating page only for staff who may rate', async () => {
    const participantPage = (member: StaffMember) =>
      app.server.inject({
        method: 'GET',
        url: `/dashboard/participants/${participantId}`,
        headers: { cookie: member.cookie },
      });
    const link = `<a id="rate-link" href="/dashboard/participants/${participantId}/rate">`;
    expect((await participantPage(staff.coordinator)).body).toContain(link);
    const viewer = await participantPage(staff.viewer);
    expect(viewer.statusCode).toBe(200);
    expect(viewer.body).not.toContain('rate-link');
    expect((await participantPage(staff.researcher)).body).not.toContain('rate-link');
  });

  it('lets a viewer read the page but not rate, and refuses a score off the scale', async () => {
    const viewerPage = await page(staff.viewer);
    expect(viewerPage.statusCode).toBe(200);
    expect(viewerPage.body).toContain('Rating needs the write permission');
    expect((await post(staff.viewer, { score_empathy: '4' })).statusCode).toBe(403);

    const refused = await post(staff.coordinator, { score_empathy: '9' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('the score must be a whole number from 1 to 5');
    expect((await post(staff.coordinator, { turn: '999999', score_empathy: '3' })).statusCode).toBe(400);
    expect((await post(staff.coordinator, {})).statusCode).toBe(400);
    expect(await app.store.ratings.list()).toEqual([]);
  });
});
