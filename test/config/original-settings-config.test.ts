/**
 * The original PromptPipe's settings and flags read as PromptPipe's, each with a start-up note naming ours, and
 * settings that are set but not read reported, never silently ignored.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { extractOriginalFlags } from '../../src/original/original-flags.ts';

const noFiles = () => false;

describe("the original PromptPipe's settings", () => {
  it('reads a PostgreSQL DATABASE_DSN as DATABASE_URL, saying so', () => {
    const config = loadConfig({ DATABASE_DSN: 'postgres://pp@db/promptpipe' }, { fileExists: noFiles });
    expect(config.storage.databaseUrl).toBe('postgres://pp@db/promptpipe');
    expect(config.startupNotes).toEqual([
      expect.stringContaining('DATABASE_DSN (the original PromptPipe’s setting) is read as DATABASE_URL'),
    ]);
  });

  it('lets DATABASE_URL win over DATABASE_DSN, and never uses a SQLite DSN (it is the original’s own file)', () => {
    const both = loadConfig(
      { DATABASE_URL: 'postgres://ours', DATABASE_DSN: 'postgres://theirs' },
      { fileExists: noFiles },
    );
    expect(both.storage.databaseUrl).toBe('postgres://ours');
    expect(both.startupNotes[0]).toContain(
      'DATABASE_DSN (the original PromptPipe’s setting) is ignored: DATABASE_URL is set',
    );

    const sqlite = loadConfig(
      { DATABASE_DSN: 'file:/var/lib/promptpipe/state.db?_foreign_keys=on' },
      { fileExists: noFiles },
    );
    expect(sqlite.storage.databaseUrl).toBeUndefined();
    expect(sqlite.startupNotes[0]).toContain('promptpipe migrate-from-original --from <that file>');
  });

  it("uses the original's prompt files when they are there and no setting names others", () => {
    const exists = (path: string) => path === 'prompts/intake_bot_system.txt';
    const config = loadConfig({}, { fileExists: exists });
    expect(config.prompts.intakeFile).toBe('prompts/intake_bot_system.txt');
    expect(config.prompts.feedbackFile).toBeUndefined();
    expect(config.startupNotes).toEqual([
      expect.stringContaining(
        'prompts/intake_bot_system.txt (the original PromptPipe’s default prompt file) is used as INTAKE_BOT_PROMPT_FILE',
      ),
    ]);
    const named = loadConfig({ INTAKE_BOT_PROMPT_FILE: 'mine.txt' }, { fileExists: exists });
    expect(named.prompts.intakeFile).toBe('mine.txt');
    expect(named.startupNotes).toEqual([]);
  });

  it("says the original's WhatsApp session database is not used and the device must be linked again", () => {
    const config = loadConfig({ WHATSAPP_DB_DSN: 'file:whatsmeow.db' }, { fileExists: noFiles });
    expect(config.startupNotes).toEqual([expect.stringContaining('promptpipe whatsapp login')]);
  });

  it('reads DEFAULT_SCHEDULE as five cron fields and refuses a broken one at start-up', () => {
    expect(loadConfig({ DEFAULT_SCHEDULE: '0 9 * * 1' }).originalApi.defaultSchedule).toEqual({
      minute: 0,
      hour: 9,
      weekday: 1,
    });
    expect(loadConfig({}).originalApi.defaultSchedule).toBeUndefined();
    expect(() => loadConfig({ DEFAULT_SCHEDULE: 'every morning' })).toThrow(/DEFAULT_SCHEDULE must have five fields/);
  });
});

describe('settings that are set but not read', () => {
  it('names a misspelt setting with the one it resembles', () => {
    const config = loadConfig({ GENAI_MDOEL: 'gpt-4o' }, { fileExists: noFiles });
    expect(config.startupNotes).toEqual(['GENAI_MDOEL is set but not read: did you mean GENAI_MODEL?']);
  });

  it('names a setting that looks like ours but does not count with this configuration (a channel that is off)', () => {
    const config = loadConfig(
      { TWILIO_AUTH_TOKEN: 'secret-value', PROMPTPIPE_SOMETHING: 'x' },
      { fileExists: noFiles },
    );
    expect(config.startupNotes).toEqual([
      expect.stringMatching(/^PROMPTPIPE_SOMETHING is set but not read: it is not a PromptPipe setting/),
      expect.stringMatching(/^TWILIO_AUTH_TOKEN is set but not read/),
    ]);
    // A note never carries the value.
    expect(config.startupNotes.join(' ')).not.toContain('secret-value');
  });

  it('leaves alone what is not ours: the shell, Node, test tooling', () => {
    const config = loadConfig(
      {
        PATH: '/usr/bin',
        HOME: '/root',
        NODE_OPTIONS: '--x',
        PROMPTPIPE_TEST_PG_URL: 'postgres://t',
        PROMPTPIPE_ENV_FILE: '',
      },
      { fileExists: noFiles },
    );
    expect(config.startupNotes).toEqual([]);
  });
});

describe("the original PromptPipe's flags", () => {
  it('takes them out of the arguments as the settings they stand for, Go style, and notes each', () => {
    const flags = extractOriginalFlags(['--api-addr', ':9090', '-debug', '--state-dir=/srv/pp', '-genai-model', 'm']);
    expect(flags.argv).toEqual([]);
    expect(flags.settings).toEqual({
      API_ADDR: ':9090',
      PROMPTPIPE_DEBUG: 'true',
      PROMPTPIPE_STATE_DIR: '/srv/pp',
      GENAI_MODEL: 'm',
    });
    expect(flags.notes).toContain("--api-addr (the original PromptPipe's flag) is read as API_ADDR");
  });

  it("keeps PromptPipe's own arguments, and says what replaces the WhatsApp login flags", () => {
    const flags = extractOriginalFlags(['serve', '--qr-output', 'qr.png', '-numeric-code', '--debug=false']);
    expect(flags.argv).toEqual(['serve']);
    expect(flags.settings).toEqual({ PROMPTPIPE_DEBUG: 'false' });
    expect(flags.notes).toEqual([
      expect.stringContaining(
        '--qr-output (the original PromptPipe\'s flag) is ignored: link WhatsApp with "promptpipe whatsapp login"',
      ),
      expect.stringContaining('--pairing-code'),
      "--debug (the original PromptPipe's flag) is read as PROMPTPIPE_DEBUG",
    ]);
    expect(extractOriginalFlags(['participants', 'list', '--status', 'active']).argv).toEqual([
      'participants',
      'list',
      '--status',
      'active',
    ]);
  });

  it('refuses a value flag without its value', () => {
    expect(() => extractOriginalFlags(['--api-addr'])).toThrow('--api-addr needs a value');
  });
});
