/**
 * The real `promptpipe serve`: a participant enrolled with a spreadsheet formula for a name writes formulas in the web
 * chat; `GET /export/…csv` hands the researcher cells that start with `'` (text in a spreadsheet, not a formula run on
 * opening), while `GET /export/…jsonl` keeps the exact text.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { type ServerProcess, startServer, stopServer, waitFor } from '../support/server-process.ts';

const API_TOKEN = 'e2e-export-formulas-token';
const NAME = '=HYPERLINK("http://x","y")';
const PHONE = '+15551230077';
const SAID = ['=1+1', '@SUM(1)', '-2+3+cmd|" /C calc"!A0'];
const REPLY = '+1 for starting! Which habit would you like to build?';
const auth = { authorization: `Bearer ${API_TOKEN}` };

let stateDir = '';
let model: ScriptedOpenAiServer | undefined;
let server: ServerProcess | undefined;

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-export-formulas-'));
  model = await startScriptedOpenAiServer({ respond: () => ({ content: REPLY }) });
  server = await startServer({
    PATH: process.env.PATH ?? '',
    PROMPTPIPE_STATE_DIR: stateDir,
    LOG_LEVEL: 'warn',
    PROMPTPIPE_CHANNEL: 'webchat',
    PROMPTPIPE_API_TOKEN: API_TOKEN,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    GENAI_MODEL: 'scripted',
  });
}, 60_000);

afterAll(async () => {
  if (server) await stopServer(server, 10_000);
  await model?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
}, 30_000);

async function exported(file: string): Promise<string> {
  const response = await fetch(`${server?.baseUrl}/export/${file}`, { headers: auth });
  expect(response.status, file).toBe(200);
  return response.text();
}

const jsonLines = (body: string): Record<string, unknown>[] =>
  body
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('CSV export of formulas a participant typed', () => {
  it("starts those cells with ' in CSV and keeps them exact in JSON Lines", { timeout: 60_000 }, async () => {
    const base = server?.baseUrl ?? '';
    const enrolled = await fetch(`${base}/conversation/participants`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: PHONE, name: NAME, channel: 'webchat', timezone: 'UTC' }),
    });
    expect(enrolled.status, await enrolled.clone().text()).toBe(201);
    const participant = ((await enrolled.json()) as { result: { id: string; chat_url: string } }).result;
    for (const text of SAID) {
      const sent = await fetch(`${base}${participant.chat_url}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      });
      expect(sent.status, await sent.clone().text()).toBe(202);
    }
    const recorded = await waitFor(
      'the three messages in the export',
      async () => {
        const rows = jsonLines(await exported('messages.jsonl'));
        const said = rows.filter((row) => row.kind === 'message').map((row) => row.content);
        return said.length === SAID.length ? rows : undefined;
      },
      30_000,
      [server],
    );

    // JSON Lines: exactly what was typed.
    expect(recorded.filter((row) => row.kind === 'message').map((row) => row.content)).toEqual(SAID);
    const [person] = jsonLines(await exported('participants.jsonl'));
    expect(person).toMatchObject({ name: NAME, phone_number: PHONE });

    // CSV: the same cells as text, the phone number and the numeric columns untouched.
    const people = parse(await exported('participants.csv'), { columns: true }) as Record<string, string>[];
    expect(people).toHaveLength(1);
    expect(people[0]).toMatchObject({ name: `'${NAME}`, phone_number: PHONE, success_count: '0' });
    const messages = parse(await exported('messages.csv'), { columns: true }) as Record<string, string>[];
    expect(messages.filter((row) => row.kind === 'message').map((row) => row.content)).toEqual(
      SAID.map((text) => `'${text}`),
    );
    expect(messages.find((row) => row.kind === 'reply')?.content).toBe(`'${REPLY}`);
    for (const row of messages) {
      expect(row.message_id).toMatch(/^\d+$/);
      expect(row.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    }
  });
});
