/**
 * The original PromptPipe's settings and command-line flags, read as PromptPipe's own (pure: it rewrites an
 * environment map; `config.ts` stays the only reader of process.env). Every setting or flag taken this way, and
 * every one that cannot be, gives a start-up note naming PromptPipe's equivalent: nothing is silently ignored.
 *
 * Its setting names are mostly PromptPipe's too (API_ADDR, OPENAI_API_KEY, GENAI_MODEL, PROMPTPIPE_DEBUG…). The ones
 * that differ: `DATABASE_DSN` (ours is `DATABASE_URL`), its default prompt file names, `WHATSAPP_DB_DSN`.
 */
import type { Environment } from './reader.ts';

/** The original's prompt files by setting: its default path, PromptPipe's built-in one. */
const ORIGINAL_PROMPT_FILES = [
  { setting: 'INTAKE_BOT_PROMPT_FILE', original: 'prompts/intake_bot_system.txt', ours: 'prompts/intake.txt' },
  {
    setting: 'PROMPT_GENERATOR_PROMPT_FILE',
    original: 'prompts/prompt_generator_system.txt',
    ours: 'prompts/prompt-generator.txt',
  },
  {
    setting: 'FEEDBACK_TRACKER_PROMPT_FILE',
    original: 'prompts/feedback_tracker_system.txt',
    ours: 'prompts/feedback.txt',
  },
] as const;

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

export interface AliasedSettings {
  env: Environment;
  notes: string[];
}

/**
 * The environment with the original's names read as PromptPipe's. `fileExists` answers for paths relative to the
 * working directory (the original's prompt files).
 */
export function applyOriginalSettingNames(env: Environment, fileExists: (path: string) => boolean): AliasedSettings {
  const aliased: Record<string, string | undefined> = { ...env };
  const notes: string[] = [];
  const dsn = env['DATABASE_DSN']?.trim();
  if (dsn) {
    if (env['DATABASE_URL']?.trim()) {
      notes.push('DATABASE_DSN (the original PromptPipe’s setting) is ignored: DATABASE_URL is set and wins');
    } else if (POSTGRES_URL.test(dsn)) {
      aliased['DATABASE_URL'] = dsn;
      notes.push('DATABASE_DSN (the original PromptPipe’s setting) is read as DATABASE_URL, PromptPipe’s name for it');
    } else {
      notes.push(
        'DATABASE_DSN (the original PromptPipe’s setting) names a SQLite file and is ignored: PromptPipe keeps its ' +
          'SQLite database in PROMPTPIPE_STATE_DIR/promptpipe.db. To bring the original’s data over, run ' +
          '"promptpipe migrate-from-original --from <that file>" (docs/migrating.md)',
      );
    }
  }
  if (env['WHATSAPP_DB_DSN']?.trim()) {
    notes.push(
      'WHATSAPP_DB_DSN (the original PromptPipe’s WhatsApp session database) is ignored: the whatsapp-web channel ' +
        'keeps its linked device in PromptPipe’s database; link the device again with "promptpipe whatsapp login" ' +
        '(docs/migrating.md)',
    );
  }
  for (const prompt of ORIGINAL_PROMPT_FILES) {
    if (env[prompt.setting]?.trim() || !fileExists(prompt.original)) continue;
    aliased[prompt.setting] = prompt.original;
    notes.push(
      `${prompt.original} (the original PromptPipe’s default prompt file) is used as ${prompt.setting}; ` +
        `PromptPipe’s own default is ${prompt.ours}`,
    );
  }
  return { env: aliased, notes };
}

/**
 * Names that are read elsewhere than by the configuration (the settings file's name) or by test tooling only, so
 * they are never reported as unread.
 */
const READ_ELSEWHERE = /^(PROMPTPIPE_ENV_FILE|PROMPTPIPE_TEST_.*|DATABASE_DSN|WHATSAPP_DB_DSN)$/;

/**
 * The families of settings that are only read with another setting (a channel's, while it is off) and the
 * original's: a name of these families always looks like a setting.
 */
const SETTING_FAMILIES = ['PROMPTPIPE', 'WHATSAPP', 'TWILIO', 'TELEGRAM', 'OPENAI', 'GENAI', 'LLM', 'DATABASE'];

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/**
 * Notes for the settings that look like PromptPipe's (or the original's) but that the configuration did not read:
 * a misspelling, a setting of another version, or one that only counts with another setting (a channel's, while
 * that channel is off). A name "looks like" a setting when it starts as one does (`GENAI_`, `WHATSAPP_`…) or is
 * one or two letters away from one.
 */
export function unreadSettingNotes(env: Environment, read: ReadonlySet<string>): string[] {
  const known = [...read];
  const prefixes = new Set([
    ...SETTING_FAMILIES,
    ...known.map((name) => name.split('_')[0]).filter((prefix) => prefix && prefix.length > 2),
  ]);
  const notes: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (read.has(name) || READ_ELSEWHERE.test(name) || env[name] === undefined) continue;
    const nearest = known
      .map((candidate) => ({ candidate, distance: distance(name, candidate) }))
      .sort((a, b) => a.distance - b.distance)[0];
    const close = nearest !== undefined && nearest.distance <= 2;
    if (!close && !prefixes.has(name.split('_')[0] ?? '')) continue;
    notes.push(
      `${name} is set but not read: ` +
        (close
          ? `did you mean ${nearest.candidate}?`
          : 'it is not a PromptPipe setting, or it only applies with another setting (a channel that is not ' +
            'enabled); see the configuration table in README.md'),
    );
  }
  return notes;
}
