/**
 * The real `promptpipe` process started the way the original PromptPipe was: with its flags and settings. It listens
 * where `--api-addr` says, keeps its data where `--state-dir` says, and says at start-up how each of the original's
 * settings was read, and which set settings it does not read. On PostgreSQL it refuses the original's own database.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import {
  answersAsItself,
  freePort,
  type ServerProcess,
  spawnServer,
  stopServer,
  waitFor,
} from '../support/server-process.ts';

const pgUrl = process.env['PROMPTPIPE_TEST_PG_URL'];
const directories: string[] = [];
let server: ServerProcess | undefined;

afterAll(async () => {
  if (server && !server.exited) await stopServer(server);
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describe("the server started with the original PromptPipe's flags and settings", () => {
  it('listens on --api-addr, keeps its data in --state-dir and notes every setting it read or did not', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-original-flags-'));
    directories.push(stateDir);
    const port = await freePort();
    server = spawnServer(
      {
        PROMPTPIPE_CLOCK: 'manual',
        DATABASE_DSN: `file:${join(stateDir, 'state.db')}?_foreign_keys=on`,
        GENAI_MDOEL: 'gpt-4o',
      },
      ['--api-addr', `127.0.0.1:${port}`, `-state-dir=${stateDir}`, '--debug'],
    );
    const baseUrl = `http://127.0.0.1:${port}`;
    const running = server;
    await waitFor('GET /health on --api-addr', () => answersAsItself(baseUrl, running.child, undefined), 20_000, [
      running,
    ]);
    expect(existsSync(join(stateDir, 'promptpipe.db'))).toBe(true);
    const output = running.output.join('');
    for (const note of [
      "--api-addr (the original PromptPipe's flag) is read as API_ADDR",
      "--state-dir (the original PromptPipe's flag) is read as PROMPTPIPE_STATE_DIR",
      "--debug (the original PromptPipe's flag) is read as PROMPTPIPE_DEBUG",
      'DATABASE_DSN (the original PromptPipe’s setting) names a SQLite file and is ignored',
      'GENAI_MDOEL is set but not read: did you mean GENAI_MODEL?',
    ]) {
      expect(output).toContain(note);
    }
    // A participant stored by digits only, as the original's scripts send it, is E.164.
    const enrolled = await fetch(`${baseUrl}/conversation/participants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: '447911123456' }),
    });
    expect(enrolled.status).toBe(201);
    expect(((await enrolled.json()) as { result: { phone_number: string } }).result.phone_number).toBe('+447911123456');
    const exit = await stopServer(running);
    expect(exit.code).toBe(0);
  });

  it.skipIf(!pgUrl)("refuses to run on the original's own PostgreSQL database, saying what to do", async () => {
    const schema = `promptpipe_original_${randomBytes(4).toString('hex')}`;
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    try {
      await client.query(`create schema "${schema}"`);
      await client.query(`create table "${schema}".conversation_participants (id text primary key)`);
      const url = `${pgUrl}${pgUrl?.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
      const refused = spawnServer({ DATABASE_DSN: url, API_ADDR: `127.0.0.1:${await freePort()}` });
      const exit = await refused.exit;
      expect(exit.code).not.toBe(0);
      expect(refused.output.join('')).toContain("points at the original PromptPipe's database");
      const { rows } = await client.query('select count(*)::int as tables from pg_tables where schemaname = $1', [
        schema,
      ]);
      expect(rows[0]?.tables).toBe(1); // nothing of ours was created there
    } finally {
      await client.query(`drop schema if exists "${schema}" cascade`);
      await client.end();
    }
  });
});
