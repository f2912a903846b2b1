/**
 * The original PromptPipe's command-line flags (`promptpipe --api-addr :8080 --state-dir /srv/pp --debug`), read as
 * the settings they override, like its own flags did (flags win over the environment). Go's flag syntax: one or two
 * dashes, `-flag value` or `-flag=value`; a boolean flag alone means true. Each flag taken gives a start-up note
 * naming PromptPipe's setting; the WhatsApp login flags, which have a command of their own here, say which.
 */
import { AppError } from '../domain/errors.ts';

interface FlagMeaning {
  /** The setting it sets (read as PromptPipe's by config.ts, see config/original-names.ts for DATABASE_DSN). */
  setting?: string;
  boolean?: boolean;
  /** Why it is not taken, and what to do instead. */
  instead?: string;
}

const LINK_AGAIN = 'link WhatsApp with "promptpipe whatsapp login"';

export const ORIGINAL_FLAGS: Readonly<Record<string, FlagMeaning>> = {
  'api-addr': { setting: 'API_ADDR' },
  'state-dir': { setting: 'PROMPTPIPE_STATE_DIR' },
  'app-db-dsn': { setting: 'DATABASE_DSN' },
  'openai-api-key': { setting: 'OPENAI_API_KEY' },
  'default-cron': { setting: 'DEFAULT_SCHEDULE' },
  debug: { setting: 'PROMPTPIPE_DEBUG', boolean: true },
  'intake-bot-prompt-file': { setting: 'INTAKE_BOT_PROMPT_FILE' },
  'prompt-generator-prompt-file': { setting: 'PROMPT_GENERATOR_PROMPT_FILE' },
  'feedback-tracker-prompt-file': { setting: 'FEEDBACK_TRACKER_PROMPT_FILE' },
  'chat-history-limit': { setting: 'CHAT_HISTORY_LIMIT' },
  'feedback-initial-timeout': { setting: 'FEEDBACK_INITIAL_TIMEOUT' },
  'feedback-followup-delay': { setting: 'FEEDBACK_FOLLOWUP_DELAY' },
  'genai-temperature': { setting: 'GENAI_TEMPERATURE' },
  'genai-model': { setting: 'GENAI_MODEL' },
  'scheduler-prep-time-minutes': { setting: 'SCHEDULER_PREP_TIME_MINUTES' },
  'auto-feedback-after-prompt-enabled': { setting: 'AUTO_FEEDBACK_AFTER_PROMPT_ENABLED', boolean: true },
  'auto-enroll-new-users': { setting: 'AUTO_ENROLL_NEW_USERS', boolean: true },
  'qr-output': { instead: `${LINK_AGAIN} (it shows the QR code in the terminal)` },
  'numeric-code': { boolean: true, instead: `${LINK_AGAIN} --pairing-code --phone <number>` },
  'whatsapp-db-dsn': { instead: `the linked device is kept in PromptPipe's database; ${LINK_AGAIN}` },
};

const FLAG = /^--?([a-z][a-z-]*)(?:=(.*))?$/s;

export interface OriginalFlags {
  /** The arguments that are not the original's flags, in order. */
  argv: string[];
  /** The settings the flags set, over the environment. */
  settings: Record<string, string>;
  notes: string[];
}

/** Takes the original's flags out of `argv`. Throws `invalid_input` for a value flag without its value. */
export function extractOriginalFlags(argv: readonly string[]): OriginalFlags {
  const rest: string[] = [];
  const settings: Record<string, string> = {};
  const notes: string[] = [];
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index] ?? '';
    if (argument === '--') {
      rest.push(...argv.slice(index));
      break;
    }
    const match = FLAG.exec(argument);
    const name = match?.[1];
    const meaning = name === undefined ? undefined : ORIGINAL_FLAGS[name];
    if (!match || !name || !meaning) {
      rest.push(argument);
      continue;
    }
    let value = match[2];
    if (value === undefined && !meaning.boolean) {
      value = argv[index + 1];
      if (value === undefined) throw new AppError('invalid_input', `--${name} needs a value (the original's flag)`);
      index += 1;
    }
    if (meaning.instead !== undefined || meaning.setting === undefined) {
      notes.push(`--${name} (the original PromptPipe's flag) is ignored: ${meaning.instead ?? 'no equivalent'}`);
      continue;
    }
    settings[meaning.setting] = value ?? 'true';
    notes.push(`--${name} (the original PromptPipe's flag) is read as ${meaning.setting}`);
  }
  return { argv: rest, settings, notes };
}
