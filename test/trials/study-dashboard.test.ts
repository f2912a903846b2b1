/**
 * The trial on the dashboard, in process through the composition root (`createApplication`, open dashboard): the
 * allocation report page counts each arm and stratum with its block, and a participant's page shows their arm.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type Application, createApplication } from '../../src/main.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { readmeExampleDesign } from '../support/readme-study-design.ts';
import { countArms, phoneFor } from './trial-fixture.ts';

let app: Application | undefined;
let directory = '';

afterEach(async () => {
  await app?.stop();
  if (directory) await rm(directory, { recursive: true, force: true });
});

async function startWithDesign(): Promise<Application> {
  directory = await mkdtemp(join(tmpdir(), 'promptpipe-study-page-'));
  const designFile = join(directory, 'study.yaml');
  await writeFile(designFile, readmeExampleDesign());
  const config = loadConfig({
    API_ADDR: '127.0.0.1:0',
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00Z',
    LOG_LEVEL: 'silent',
    STUDY_DESIGN_FILE: designFile,
  });
  const store = await createSqliteStore({ filename: ':memory:' });
  const started = await createApplication({ config, log: pino({ level: 'silent' }), store });
  await started.start();
  return started;
}

const cells = (page: string, tableId: string): string[][] => {
  const table = new RegExp(`<table id="${tableId}">([\\s\\S]*?)</table>`).exec(page)?.[1] ?? '';
  return [...table.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<t[hd][^>]*>([\s\S]*?)<\/t[hd]>/g)].map((cell) => cell[1] ?? ''),
  );
};

describe('the trial on the dashboard', () => {
  it('reports the allocations per arm and stratum, and shows a participant their arm', async () => {
    app = await startWithDesign();
    const enrolled = [];
    for (let index = 0; index < 6; index += 1) {
      const language = index < 4 ? 'en' : 'es';
      enrolled.push(await app.participants.enroll({ phoneNumber: phoneFor(index), language }, { greet: false }));
    }
    const response = await app.server.inject({ method: 'GET', url: '/dashboard/study' });
    expect(response.statusCode).toBe(200);
    const arms = cells(response.body, 'arm-counts').slice(1);
    const counts = countArms(enrolled.map((participant) => participant.arm ?? ''));
    expect(arms.map((row) => [row[0], Number(row[2])])).toEqual([
      ['coach', counts['coach'] ?? 0],
      ['static', counts['static'] ?? 0],
      ['assessment', counts['assessment'] ?? 0],
    ]);
    const strata = cells(response.body, 'strata').slice(1);
    expect(strata.map((row) => row[0])).toEqual(['language=en|import.site=', 'language=es|import.site=']);
    // Four in English fill their first block exactly when it has four places; two in Spanish take two places.
    expect(strata[1]?.at(-1)).toMatch(/^2 of (4|8)$/);

    const first = enrolled[0];
    const participantPage = await app.server.inject({ method: 'GET', url: `/dashboard/participants/${first?.id}` });
    expect(participantPage.body).toContain(`<dd id="participant-arm"><a href="/dashboard/study">${first?.arm}</a>`);

    // A day on: each participant's midday decision is listed on their decisions page.
    await app.server.inject({ method: 'POST', url: '/admin/clock', payload: { set_to: '2026-03-03T14:00:00Z' } });
    const decisions = await app.server.inject({ method: 'GET', url: `/dashboard/participants/${first?.id}/decisions` });
    expect(decisions.statusCode).toBe(200);
    const rows = cells(decisions.body, 'decisions').slice(1);
    expect(rows).toHaveLength(1);
    // Enrolled at 14:00 UTC on the 2nd: the first 12:30 (+ up to 30 minutes) moment is on the 3rd.
    expect(rows[0]?.[0]).toMatch(/^2026-03-03 1[23]:\d\d$/);
    expect(rows[0]?.[4]).toMatch(/send/);
  });
});
