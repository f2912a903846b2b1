import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../../src/cli/cli.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { startStudyApp } from './study-fixture.ts';

const TOKEN = 'test-token';
const auth = { authorization: `Bearer ${TOKEN}` };

describe('GET /export/<table>.csv|.jsonl', () => {
  let started: Awaited<ReturnType<typeof startStudyApp>>;
  beforeAll(async () => {
    started = await startStudyApp({ PROMPTPIPE_API_TOKEN: TOKEN, EXPORT_PSEUDONYM_KEY: 'k1' });
    for (const [phone, name] of [
      ['+15550001111', 'Ada'],
      ['+15550002222', 'Ben'],
    ] as const) {
      await started.app.participants.enroll({ phoneNumber: phone, name }, { greet: false });
    }
  });
  afterAll(async () => {
    await started.app.stop();
    await started.model.close();
  });

  it('requires the token', async () => {
    const response = await started.app.server.inject({ method: 'GET', url: '/export/participants.csv' });
    expect(response.statusCode).toBe(401);
  });

  it('streams CSV and JSONL with the filters as query parameters', async () => {
    const csv = await started.app.server.inject({ method: 'GET', url: '/export/participants.csv', headers: auth });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    const lines = csv.body.trim().split('\n');
    expect(lines[0]).toMatch(/^participant_id,phone_number,name,/);
    expect(lines).toHaveLength(3);
    const [ada] = await started.app.store.participants.list();
    const jsonl = await started.app.server.inject({
      method: 'GET',
      url: `/export/participants.jsonl?participant=${ada?.id}&pseudonymize=true`,
      headers: auth,
    });
    expect(jsonl.statusCode).toBe(200);
    expect(jsonl.headers['content-type']).toContain('application/x-ndjson');
    const rows = jsonl.body
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(rows).toHaveLength(1);
    expect(rows[0].phone_number).toMatch(/^pn_[0-9a-f]{16}$/);
    expect(rows[0].name).toBe('');
    expect(rows[0].language).toBe(ada?.language);
    expect(rows[0].language).toMatch(/^[a-z]{2}/);
    const since = await started.app.server.inject({
      method: 'GET',
      url: '/export/events.jsonl?since=2030-01-01',
      headers: auth,
    });
    expect(since.body).toBe('');
  });

  it('rejects an unknown table, a bad date and a bad flag with a clear 400', async () => {
    for (const url of [
      '/export/secrets.csv',
      '/export/participants.xml',
      '/export/events.csv?since=yesterday',
      '/export/jobs.csv?pseudonymize=maybe',
    ]) {
      const response = await started.app.server.inject({ method: 'GET', url, headers: auth });
      expect(response.statusCode, url).toBe(400);
      expect(response.json()).toMatchObject({ status: 'error', message: expect.any(String) });
    }
  });
});

describe('promptpipe export', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'promptpipe-export-cli-'));
  const previous = { ...process.env };
  afterAll(() => {
    process.env = previous;
    rmSync(stateDir, { recursive: true, force: true });
  });

  function io(): CliIo & { out: () => string; err: () => string; code: () => number | undefined } {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    let code: number | undefined;
    stdout.on('data', (chunk) => {
      out += String(chunk);
    });
    stderr.on('data', (chunk) => {
      err += String(chunk);
    });
    return {
      stdin: new PassThrough(),
      stdout,
      stderr,
      onSignal: () => undefined,
      exit: (value) => {
        code = value;
      },
      out: () => out,
      err: () => err,
      code: () => code,
    };
  }

  it('writes the files, and fails clearly without leaving files when --pseudonymize has no key', async () => {
    process.env['PROMPTPIPE_STATE_DIR'] = stateDir;
    process.env['LOG_LEVEL'] = 'silent';
    delete process.env['EXPORT_PSEUDONYM_KEY'];
    delete process.env['DATABASE_URL'];
    const store = await createSqliteStore({ filename: join(stateDir, 'promptpipe.db') });
    await store.participants.create({
      id: 'p1',
      phoneNumber: '+15550003333',
      name: 'Cy',
      gender: '',
      ethnicity: '',
      background: '',
      timezone: 'UTC',
      channel: 'webhook',
      status: 'active',
      enrolledAt: new Date('2026-01-01T00:00:00Z'),
      createdAt: new Date('2026-01-01T00:00:00Z'),
      updatedAt: new Date('2026-01-01T00:00:00Z'),
    });
    await store.close();

    const out = join(stateDir, 'export');
    const ok = io();
    await runCli(['export', '--out', out, '--format', 'jsonl', '--participant', 'p1'], ok);
    expect(ok.code()).toBeUndefined();
    expect(readdirSync(out).sort()).toEqual([
      'allocations.jsonl',
      'audit.jsonl',
      'codebook.md',
      'daily_outcomes.jsonl',
      'decisions.jsonl',
      'events.jsonl',
      'jobs.jsonl',
      'messages.jsonl',
      'participants.jsonl',
      'ratings.jsonl',
    ]);
    expect(JSON.parse(readFileSync(join(out, 'participants.jsonl'), 'utf8')).name).toBe('Cy');
    expect(ok.out()).toContain('participants.jsonl (1 rows)');

    const failed = io();
    const pseudo = join(stateDir, 'pseudo');
    await runCli(['export', '--out', pseudo, '--pseudonymize'], failed);
    expect(failed.code()).toBe(2);
    expect(failed.err()).toContain('EXPORT_PSEUDONYM_KEY');
    expect(existsSync(pseudo)).toBe(false);

    const badFormat = io();
    await runCli(['export', '--out', pseudo, '--format', 'xml'], badFormat);
    expect(badFormat.code()).not.toBeUndefined();
  });
});
