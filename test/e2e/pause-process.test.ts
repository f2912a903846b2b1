/**
 * Vacation mode against the real `promptpipe serve` process (webhook channel, scripted model, manual clock): a
 * participant with a 09:00 daily prompt is paused until a date; meanwhile no daily prompt goes out but their own
 * message is answered; on the date the schedule resumes at its next due time, one prompt a day, no burst of the
 * missed ones.
 */
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeOutput, REPO_ROOT } from '../support/server-process.ts';
import { schedulingCoach, startWebhookStudyServer, type WebhookStudyServer } from '../support/webhook-study-server.ts';

const API_TOKEN = 'pause-e2e-api-token';
const PHONE = '+15551230301';
const SCHEDULING = { ask: 'Remind me every day at 09:00', fixedTime: '09:00', confirm: 'Scheduled for 09:00.' };
const PROMPT = 'Take your ten-minute walk after breakfast.';

let participantId = '';
let study: WebhookStudyServer;

beforeAll(async () => {
  study = await startWebhookStudyServer({
    apiToken: API_TOKEN,
    respond: schedulingCoach({ ...SCHEDULING, dailyPrompt: PROMPT }),
  });
}, 60_000);

afterAll(async () => {
  await study?.close();
}, 30_000);

describe('vacation mode, against the server process', () => {
  it('no daily prompt while paused, replies still answered, one prompt a day from the resume date', {
    timeout: 90_000,
  }, async ({ onTestFailed }) => {
    onTestFailed(() => console.error(`${describeOutput(study.server)}\n${study.texts().join('\n')}`));
    participantId = await study.enrollScheduled({ phone: PHONE, timezone: 'UTC' }, SCHEDULING);

    const base = `/conversation/participants/${participantId}`;
    expect((await study.call('POST', `${base}/resume`)).status).toBe(409);
    expect((await study.call('POST', `${base}/pause`, { resume_on: '2026-03-02' })).status).toBe(400);
    expect((await study.call('POST', `${base}/pause`, { resume_on: 'next week' })).status).toBe(400);
    const paused = await study.call('POST', `${base}/pause`, { resume_on: '2026-03-06' });
    expect(paused.status).toBe(200);
    expect(((await paused.json()) as { result: { status: string } }).result.status).toBe('paused');

    await study.call('POST', '/channels/webhook/messages', { from: PHONE, text: 'On holiday now', id: 'm-2' });
    await study.wait('the reply while paused', () => study.texts().includes('Coach heard: On holiday now'));
    await study.clockTo('2026-03-05T23:00:00.000Z');
    expect(study.prompts()).toBe(0);

    // The resume date: the schedule goes on from its next due time (08:50 UTC, 10 minutes before 09:00), once.
    await study.clockTo('2026-03-06T12:00:00.000Z');
    await study.wait('the first prompt after the pause', () => study.prompts() === 1);
    const participant = await study.call('GET', base);
    expect(((await participant.json()) as { result: { status: string } }).result.status).toBe('active');
    await study.clockTo('2026-03-07T12:00:00.000Z');
    await study.wait('the next day’s prompt', () => study.prompts() === 2);
    expect(study.prompts()).toBe(2);
  });

  it('the CLI pauses with a date and resumes, through the running server', { timeout: 60_000 }, () => {
    const cli = (args: string[]) => {
      const run = spawnSync(process.execPath, ['src/cli/main.ts', 'participants', ...args], {
        cwd: REPO_ROOT,
        env: { PATH: process.env.PATH ?? '', PROMPTPIPE_STATE_DIR: study.stateDir, PROMPTPIPE_API_TOKEN: API_TOKEN },
        encoding: 'utf8',
        timeout: 30_000,
      });
      return { code: run.status, stdout: run.stdout, stderr: run.stderr };
    };
    const paused = cli(['pause', participantId, '--until', '2026-03-20']);
    expect(paused.code, paused.stderr).toBe(0);
    expect(JSON.parse(paused.stdout)).toEqual({ id: participantId, status: 'paused', resume_on: '2026-03-20' });
    const refused = cli(['pause', participantId, '--until', '2026-01-01']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('resume_on must be after today');
    const resumed = cli(['resume', participantId]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toEqual({ id: participantId, status: 'active' });
  });
});
