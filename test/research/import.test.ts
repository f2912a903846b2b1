import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CliIo, runCli } from '../../src/cli/cli.ts';
import { ENROLL_GREETING_JOB } from '../../src/research/import/greeting-jobs.ts';
import { waitUntil } from '../support/wait-until.ts';
import { startStudyApp } from './study-fixture.ts';

let started: Awaited<ReturnType<typeof startStudyApp>>;
beforeEach(async () => {
  started = await startStudyApp({ ENROLL_GREETING_RATE: '2' });
});
afterEach(async () => {
  await started.app.stop();
  await started.model.close();
});

async function importCsv(body: string | Buffer, query = '') {
  const response = await started.app.server.inject({
    method: 'POST',
    url: `/conversation/participants/import${query}`,
    headers: { 'content-type': 'text/csv' },
    payload: body,
  });
  return { status: response.statusCode, body: response.json() };
}

const GOOD =
  'phone_number,name,timezone,channel\n+15550100001,Ada,America/New_York,webhook\n+15550100002,Ben,Europe/London,\n';

describe('POST /conversation/participants/import', () => {
  it('enrolls every valid row and paces the greetings through the outbox', async () => {
    const { status, body } = await importCsv(`${GOOD}+15550100003,Cy,,\n`);
    expect(status).toBe(200);
    expect(body.result.enrolled.map((row: { row: number }) => row.row)).toEqual([1, 2, 3]);
    expect(body.result.greetings).toMatchObject({ queued: 3, rate_per_minute: 2 });
    const jobs = await started.app.store.jobs.listPending({ kind: ENROLL_GREETING_JOB });
    // 2 per minute: 30 s apart.
    expect(jobs.map((job) => job.runAt.toISOString())).toEqual([
      '2026-03-02T14:00:00.000Z',
      '2026-03-02T14:00:30.000Z',
      '2026-03-02T14:01:00.000Z',
    ]);
    expect(await started.app.store.participants.count()).toBe(3);
    // Only the first greeting is due now; the others wait for their slot.
    await started.app.runner.runDue();
    const greeted = async () =>
      (await started.app.store.research.transcriptPage({}, undefined, 100)).filter((entry) => entry.kind === 'reply');
    await waitUntil('the first greeting', async () => (await greeted()).length === 1);
    const waiting = await started.app.store.jobs.listPending({ kind: ENROLL_GREETING_JOB });
    expect(waiting).toHaveLength(2);
    await started.app.runner.advanceTo(new Date('2026-03-02T14:01:00.000Z'));
    await waitUntil('all three greetings', async () => (await greeted()).length === 3);
    const deliveries = async () =>
      (await started.app.store.research.jobsPage({}, undefined, 100)).filter((job) => job.kind === 'deliver_message');
    await waitUntil('three deliveries', async () => (await deliveries()).length === 3);
  });

  it('re-running the same file skips the already-enrolled numbers and says so', async () => {
    await importCsv(GOOD);
    const { status, body } = await importCsv(`${GOOD}+15550100009,Dee,,\n`);
    expect(status).toBe(200);
    expect(body.message).toContain('2 skipped (already enrolled)');
    expect(body.result.skipped).toEqual([
      expect.objectContaining({ row: 1, phone_number: '+15550100001', reason: 'already enrolled' }),
      expect.objectContaining({ row: 2, phone_number: '+15550100002', reason: 'already enrolled' }),
    ]);
    expect(body.result.enrolled).toHaveLength(1);
  });

  it('reports every invalid row (field and problem) and enrolls nobody unless partial', async () => {
    const csv =
      'phone_number,name,timezone,channel\n' +
      '+15550100001,Ada,America/New_York,\n' +
      'not-a-phone,Bad,,\n' +
      '+15550100003,Zed,Mars/Olympus,\n' +
      '+15550100001,Twin,,\n' +
      '+15550100005,Chan,,carrier-pigeon\n';
    const { status, body } = await importCsv(csv);
    expect(status).toBe(400);
    expect(body.status).toBe('error');
    expect(body.result.errors).toEqual([
      { row: 2, field: 'phone_number', problem: '"not-a-phone" is not a valid phone number' },
      { row: 3, field: 'timezone', problem: expect.stringContaining('"Mars/Olympus" is not an IANA time zone') },
      { row: 4, field: 'phone_number', problem: '+15550100001 duplicates row 1 of this file' },
      { row: 5, field: 'channel', problem: expect.stringContaining('unknown channel "carrier-pigeon"') },
    ]);
    expect(body.message).toContain('row 3 timezone');
    expect(await started.app.store.participants.count()).toBe(0);

    const partial = await importCsv(csv, '?partial=true');
    expect(partial.status).toBe(200);
    expect(partial.body.result.enrolled.map((row: { row: number }) => row.row)).toEqual([1]);
    expect(partial.body.result.errors).toHaveLength(4);
    expect(await started.app.store.participants.count()).toBe(1);
  });

  it("takes each row's language (canonical BCP 47), defaults an empty one, refuses an unknown tag (issue 15)", async () => {
    const bad = await importCsv('phone_number,language\n+15550100001,es\n+15550100002,klingonese\n');
    expect(bad.status).toBe(400);
    expect(bad.body.result.errors).toEqual([
      {
        row: 2,
        field: 'language',
        problem: expect.stringContaining('"klingonese" is not a known BCP 47 language tag'),
      },
    ]);
    expect(await started.app.store.participants.count()).toBe(0);

    const { status } = await importCsv('phone_number,language\n+15550100001,es\n+15550100002,PT-br\n+15550100003,\n');
    expect(status).toBe(200);
    const languageOf = async (phone: string) => (await started.app.store.participants.getByPhone(phone))?.language;
    expect(await languageOf('+15550100001')).toBe('es');
    expect(await languageOf('+15550100002')).toBe('pt-BR');
    expect(await languageOf('+15550100003')).toBe('en');
  });

  it('dry run validates without enrolling', async () => {
    const { status, body } = await importCsv(GOOD, '?dry_run=true');
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      dry_run: true,
      enrolled: [
        { row: 1, participant_id: null },
        { row: 2, participant_id: null },
      ],
    });
    expect(await started.app.store.participants.count()).toBe(0);
    expect(await started.app.store.jobs.listPending({ kind: ENROLL_GREETING_JOB })).toHaveLength(0);
  });

  it('rejects wrong columns, an empty file, a header-only file and non-UTF-8 bytes clearly', async () => {
    const cases: [string | Buffer, RegExp][] = [
      [
        'phone,first_name\n+15550100001,Ada\n',
        /wrong columns: unknown column\(s\) "phone", "first_name"; the phone_number column is missing/,
      ],
      ['', /empty/],
      ['phone_number,name\n', /no participant rows/],
      [
        Buffer.from([
          0x70, 0x68, 0x6f, 0x6e, 0x65, 0x5f, 0x6e, 0x75, 0x6d, 0x62, 0x65, 0x72, 0x0a, 0xff, 0xfe, 0x41, 0x0a,
        ]),
        /not UTF-8/,
      ],
      ['phone_number,name\n+15550100001,"Ada\n', /not valid CSV/],
    ];
    for (const [payload, message] of cases) {
      const { status, body } = await importCsv(payload);
      expect(status).toBe(400);
      expect(body).toMatchObject({ status: 'error', message: expect.stringMatching(message) });
    }
    expect(await started.app.store.participants.count()).toBe(0);
  });

  it('reads a body without a content type (or a generic one) as JSON when it starts with [ or {, else as CSV', async () => {
    const send = async (payload: string | Buffer, headers: Record<string, string> = {}) => {
      const response = await started.app.server.inject({
        method: 'POST',
        url: '/conversation/participants/import?dry_run=true',
        headers,
        payload,
      });
      return { status: response.statusCode, body: response.json() };
    };
    const csv = await send(Buffer.from(GOOD));
    expect(csv.status, JSON.stringify(csv.body)).toBe(200);
    expect(csv.body.result.enrolled).toHaveLength(2);
    const json = await send(Buffer.from(`\uFEFF  [{"phone_number": "+15550100001"}]`));
    expect(json.status, JSON.stringify(json.body)).toBe(200);
    expect(json.body.result.enrolled).toHaveLength(1);
    // curl --data-binary's default type, and text/plain: what clients send bytes with when not told otherwise.
    for (const type of ['application/x-www-form-urlencoded', 'text/plain; charset=utf-8']) {
      const typed = await send(GOOD, { 'content-type': type });
      expect(typed.status, `${type}: ${JSON.stringify(typed.body)}`).toBe(200);
      expect(typed.body.result.enrolled).toHaveLength(2);
    }
    const broken = await send(Buffer.from('[{"phone_number": '));
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/starts like JSON but is not valid JSON/);

    const other = await send('<participants/>', { 'content-type': 'application/xml' });
    expect(other.status).toBe(415);
    expect(other.body).toMatchObject({ status: 'error', message: expect.stringContaining('application/xml') });
    expect(other.body.message).toMatch(/text\/csv .*application\/json/);
    expect(await started.app.store.participants.count()).toBe(0);
  });

  it('counts rows in CSV errors as everywhere else (1 = the first row after the header), not lines', async () => {
    const cases: [string, RegExp][] = [
      // A quoted field over two lines and an empty line: the broken row is the 2nd row, on line 5.
      [
        'phone_number,name\n+15550100001,"Ada\nLovelace"\n\n+15550100002,B"ob\n',
        /^the file is not valid CSV: row 2: a quote inside a field that does not start with one/,
      ],
      [
        'phone_number,name\n+15550100001,"Ada\nLovelace"\n+15550100002,Bob,extra\n',
        /^the file is not valid CSV: row 2: not as many fields as the header has columns$/,
      ],
      ['phone_number,name\n+15550100001,"Ada"x\n', /^the file is not valid CSV: row 1: text after the closing quote/],
      ['phone_number,name\n+15550100001,Ada\n+15550100002,"Bob\n', /row 2: a quoted field is never closed$/],
      ['phone_number,"na"me\n+15550100001,Ada\n', /^the file is not valid CSV: the header row: text after/],
    ];
    for (const [payload, message] of cases) {
      const { status, body } = await importCsv(payload);
      expect(status, payload).toBe(400);
      expect(body.message, payload).toMatch(message);
      expect(body.message, payload).not.toMatch(/line \d/);
    }
  });

  it('reports wrong columns and invalid CSV together, the columns first', async () => {
    const { status, body } = await importCsv('phone_number,first_name\n+15550100001,"Ada"x\n+15550100002,Bob\n');
    expect(status).toBe(400);
    expect(body.message).toMatch(
      /^wrong columns: unknown column\(s\) "first_name"\. Expected columns: .*; and the file is not valid CSV: row 1: /,
    );
    expect(await started.app.store.participants.count()).toBe(0);
  });

  it('accepts a JSON array with the same validation', async () => {
    const response = await started.app.server.inject({
      method: 'POST',
      url: '/conversation/participants/import',
      payload: [{ phone_number: '+15550100001', name: 'Ada', timezone: 'Asia/Tokyo' }, { phone_number: '123' }],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().result.errors).toEqual([
      { row: 2, field: 'phone_number', problem: '"123" is not a valid phone number' },
    ]);
    const wrong = await started.app.server.inject({
      method: 'POST',
      url: '/conversation/participants/import',
      payload: { phone_number: '1' },
    });
    expect(wrong.statusCode).toBe(400);
    const unknown = await started.app.server.inject({
      method: 'POST',
      url: '/conversation/participants/import',
      payload: [{ phone: '1' }],
    });
    expect(unknown.json().message).toMatch(/wrong columns/);
  });
});

describe('promptpipe participants import', () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'promptpipe-import-cli-'));
  const previous = { ...process.env };
  afterEach(() => {
    process.env = { ...previous };
  });

  function io() {
    const stdout = new PassThrough();
    let out = '';
    let code: number | undefined;
    stdout.on('data', (chunk) => {
      out += String(chunk);
    });
    const value: CliIo = {
      stdin: new PassThrough(),
      stdout,
      stderr: new PassThrough(),
      onSignal: () => undefined,
      exit: (exitCode) => {
        code = exitCode;
      },
    };
    return { io: value, out: () => out, code: () => code };
  }

  it('imports a file, then skips on re-run; invalid rows exit 1', async () => {
    Object.assign(process.env, { PROMPTPIPE_STATE_DIR: stateDir, LOG_LEVEL: 'silent' });
    delete process.env['DATABASE_URL'];
    const file = join(stateDir, 'people.csv');
    writeFileSync(file, GOOD);
    const first = io();
    await runCli(['participants', 'import', file], first.io);
    expect(first.code()).toBeUndefined();
    expect(first.out()).toContain('2 enrolled');
    const again = io();
    await runCli(['participants', 'import', file], again.io);
    expect(again.out()).toContain('0 enrolled, 2 skipped (already enrolled)');
    writeFileSync(file, 'phone_number,timezone\n+15550100007,Nowhere/Land\n');
    const bad = io();
    await runCli(['participants', 'import', file, '--dry-run'], bad.io);
    expect(bad.code()).toBe(1);
    expect(bad.out()).toContain('row 1 timezone');
    rmSync(stateDir, { recursive: true, force: true });
  });
});
