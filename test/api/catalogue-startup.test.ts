/** A study catalogue missing keys: the wired application warns at start-up and falls back to English per key. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { type Application, createApplication } from '../../src/main.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

let app: Application | undefined;
let directory: string | undefined;
afterEach(async () => {
  await app?.stop();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('MESSAGE_CATALOGUE_DIR at start-up', () => {
  it('warns about a catalogue missing keys and uses English for them', async () => {
    directory = mkdtempSync(join(tmpdir(), 'promptpipe-catalogues-'));
    writeFileSync(join(directory, 'fr.json'), JSON.stringify({ 'notice.unregistered': 'Vous êtes désinscrit.' }));
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
        done();
      },
    });
    const config = loadConfig({
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: '2026-03-02T14:00:00Z',
      MESSAGE_CATALOGUE_DIR: directory,
      LOG_LEVEL: 'warn',
    });
    app = await createApplication({
      config,
      log: pino({ level: 'warn' }, sink),
      store: await createSqliteStore({ filename: ':memory:' }),
    });
    const warning = lines.find((line) => line['language'] === 'fr');
    expect(warning?.['msg']).toMatch(/message catalogue "fr" lacks .*donePoll\.question.*English is used/);
    expect(warning?.['missing_keys']).toContain('dailyPrompt.reminder');
    expect(warning?.['missing_keys']).not.toContain('notice.unregistered');
    expect(lines.some((line) => line['language'] === 'es')).toBe(false);

    const participant = await app.participants.enroll(
      { phoneNumber: '+15551230001', language: 'fr' },
      { greet: false },
    );
    await app.participants.unregister(participant.id);
    const entries = await app.store.transcript.list(participant.id);
    expect(entries.at(-1)?.content).toBe('Vous êtes désinscrit.');
  });
});
