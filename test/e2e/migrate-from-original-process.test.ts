/**
 * Moving a study from the original PromptPipe, end to end with real processes: `promptpipe migrate-from-original`
 * (dry run, --apply, and --apply again) on a database shaped like the original's, then `promptpipe serve` on the
 * imported data, a scripted model and a webhook gateway, on the manual clock. The participant in FEEDBACK, whose
 * prompt for today the original already sent, gets the next one once, tomorrow at 08:50 in Toronto (09:00 minus the
 * prep time); participants answer and the coach answers them with their imported history in its context.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import {
  ADA,
  ADA_REMEMBERS,
  BEN,
  BEN_REMEMBERS,
  createOriginalSqliteDatabase,
  MIGRATION_TIME,
} from '../support/original-database-fixture.ts';
import { type ScriptedOpenAiServer, startScriptedOpenAiServer } from '../support/scripted-openai-server.ts';
import { type ServerProcess, spawnServer, startServer, stopServer, waitFor } from '../support/server-process.ts';

const TOKEN = 'migration-e2e-token';
const TOMORROWS_PROMPT = 'Tomorrow after breakfast, walk Biscuit to the park and back.';
let directory: string;
let gateway: HttpReceiver;
let model: ScriptedOpenAiServer;
let server: ServerProcess | undefined;

function settings(): Record<string, string> {
  return {
    PROMPTPIPE_STATE_DIR: join(directory, 'state'),
    PROMPTPIPE_CLOCK: 'manual',
    PROMPTPIPE_CLOCK_START: MIGRATION_TIME,
    PROMPTPIPE_API_TOKEN: TOKEN,
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'scripted-key',
  };
}

async function runCommand(args: string[]): Promise<string> {
  const command = spawnServer(settings(), args);
  const exit = await command.exit;
  const output = command.output.join('');
  if (exit.code !== 0) throw new Error(`promptpipe ${args.join(' ')} exited ${exit.code}\n${output}`);
  return output;
}

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server?.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

const deliveredTexts = (to: string) =>
  gateway.requests
    .map((request) => JSON.parse(request.body) as { to: string; text?: string })
    .filter((delivery) => delivery.to === to)
    .map((delivery) => delivery.text ?? '');

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'promptpipe-migration-e2e-'));
  createOriginalSqliteDatabase(join(directory, 'state.db'));
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({
    respond: (request) => {
      const system = request.body.messages[0]?.content ?? '';
      if (system.startsWith('You write one short daily habit prompt')) return { content: TOMORROWS_PROMPT };
      const said = request.body.messages.map((message) => message.content ?? '').join('\n');
      const remembers = said.includes(ADA_REMEMBERS) || said.includes(BEN_REMEMBERS);
      return { content: remembers ? 'Coach: I remember what you told me before.' : 'Coach: who are you?' };
    },
  });
});
afterAll(async () => {
  if (server && !server.exited) await stopServer(server);
  await model?.close();
  await gateway?.close();
  await rm(directory, { recursive: true, force: true });
});

describe('moving a study from the original PromptPipe', () => {
  it('imports once, then each participant gets their next daily prompt once at the right local time', async () => {
    const from = join(directory, 'state.db');
    const dryRun = await runCommand(['migrate-from-original', '--from', from]);
    expect(dryRun).toContain('3 participant(s) (2 in FEEDBACK, 1 in INTAKE)');
    expect(dryRun).toContain('Dry run: nothing was written');
    const applied = await runCommand(['migrate-from-original', '--from', `file:${from}?_foreign_keys=on`, '--apply']);
    expect(applied).toContain('Imported 3 participant(s), 5 history message(s), 1 daily schedule(s)');
    expect(applied).toContain('link it again');
    const again = await runCommand(['migrate-from-original', '--from', from, '--apply']);
    expect(again).toContain('0 participant(s)');
    expect(again).toContain('Already imported by an earlier run: 3 participant(s), 4 response(s) and receipt(s)');

    server = await startServer(settings());
    const participants = await api('GET', '/conversation/participants');
    expect((participants['result'] as { phone_number: string }[]).map((row) => row.phone_number).sort()).toEqual(
      [ADA.e164, BEN.e164, '+15551230003'].sort(),
    );

    // Today's prompt was served by the original: none at 08:50 today, none before tomorrow's 08:50.
    await api('POST', '/admin/clock', { set_to: '2026-03-03T13:49:00.000Z' });
    expect(deliveredTexts(ADA.e164)).not.toContain(TOMORROWS_PROMPT);
    await api('POST', '/admin/clock', { set_to: '2026-03-03T17:00:00.000Z' });
    await waitFor(
      'the daily prompt at the gateway',
      () => deliveredTexts(ADA.e164).includes(TOMORROWS_PROMPT),
      15_000,
      [server],
    );
    expect(deliveredTexts(ADA.e164).filter((text) => text === TOMORROWS_PROMPT)).toHaveLength(1);
    const history = (await api('GET', `/conversation/participants/${ADA.id}/history`))['result'] as {
      content: string;
      kind: string;
      created_at: string;
    }[];
    const prompt = history.find((entry) => entry.content === TOMORROWS_PROMPT);
    expect(prompt?.created_at).toBe('2026-03-03T13:50:00.000Z');
    expect(history[0]).toMatchObject({ kind: 'reply', content: 'Hi Ada! Which habit would you like to build?' });
  });

  it('continues each conversation with the imported history in the coach’s context', async () => {
    for (const participant of [ADA, BEN]) {
      const response = await fetch(`${server?.baseUrl}/channels/webhook/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ from: participant.e164, text: 'Hello again', id: `after-move-${participant.id}` }),
      });
      expect(response.status).toBe(202);
      await waitFor(
        `the coach's answer to ${participant.id}`,
        () => deliveredTexts(participant.e164).some((text) => text.startsWith('Coach:')),
        15_000,
        [server],
      );
      expect(deliveredTexts(participant.e164).filter((text) => text.startsWith('Coach:'))).toEqual([
        'Coach: I remember what you told me before.',
      ]);
    }
    const exit = await stopServer(server as ServerProcess);
    expect(exit.code).toBe(0);
  });
});
