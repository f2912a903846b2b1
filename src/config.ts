/**
 * The only reader of process.env. Reads the environment (and an optional `.env` file), validates it, and returns
 * a frozen, typed configuration. Every setting is documented in README.md and `.env.example`.
 *
 * Each capability's settings are read by one module in `config/` (server, llm, channels, study, safety,
 * evaluation); this file assembles them. The settings are plain data: the adapters map
 * them to their own options, so nothing here imports an adapter.
 */
import { existsSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { type ChannelSettings, readChannelSettings } from './config/channels.ts';
import { type LlmSettings, type PromptSettings, readLlmSettings, readPromptSettings } from './config/llm.ts';
import { applyOriginalSettingNames, unreadSettingNotes } from './config/original-names.ts';
import { ConfigReader, type Environment, refuseProblems } from './config/reader.ts';
import { readSafetySettings, type SafetySettings } from './config/safety.ts';
import { checkServerDurations, readServerSettings, type ServerSettings } from './config/server.ts';
import { readStudySettings, type StudySettings } from './config/study.ts';
import { AppError } from './domain/errors.ts';

export * from './config/channels.ts';
export { type EvaluationModelSettings, type EvaluationSettings, loadEvaluationSettings } from './config/evaluation.ts';
export type { LlmSettings, PromptSettings, ToolProtocolSetting } from './config/llm.ts';
export type { Environment } from './config/reader.ts';
export {
  type HttpProxySettings,
  type LogLevel,
  MINIMUM_JOB_LEASE_MS,
  parseListenAddress,
  type SqliteSynchronousSetting,
} from './config/server.ts';

export interface Config extends ServerSettings, StudySettings {
  llm: LlmSettings;
  prompts: PromptSettings;
  channel: ChannelSettings;
  /** Risk detection, safety messages and staff alert routes (config/safety.ts, docs/safety.md). */
  safety: SafetySettings;
  /**
   * Said once at start-up (warnings): the original PromptPipe's settings and flags read as PromptPipe's, and settings
   * that are set but not read (misspelt, or for a channel that is off).
   */
  startupNotes: readonly string[];
}

/**
 * process.env over the optional `.env` file of the working directory (the real environment wins).
 * `PROMPTPIPE_ENV_FILE` names another file, or none when set empty (tests, containers: only the real environment
 * counts). A named file that does not exist is an error; the default `.env` is optional.
 */
export function readEnvironment(envFile?: string): Environment {
  const named = envFile ?? process.env.PROMPTPIPE_ENV_FILE;
  const path = named ?? '.env';
  if (path === '') return { ...process.env };
  if (named !== undefined && !existsSync(path)) {
    throw new AppError('invalid_input', `PROMPTPIPE_ENV_FILE: ${path} does not exist (set it empty to read no file)`);
  }
  // Node's own parser: the dotenv syntax (quotes, comments, `export`, multi-line values in double quotes).
  const fromFile = existsSync(path) ? parseEnv(readFileSync(path, 'utf8')) : {};
  return { ...fromFile, ...process.env };
}

/**
 * Validates the environment. Throws `AppError('invalid_input')` listing every problem at once. `notes` are added to
 * the start-up notes (the CLI's, for the original's flags); `fileExists` finds the original's prompt files.
 */
export function loadConfig(
  env: Environment,
  options: { notes?: readonly string[]; fileExists?: (path: string) => boolean } = {},
): Config {
  const aliased = applyOriginalSettingNames(env, options.fileExists ?? existsSync);
  const read = new ConfigReader(aliased.env);
  const server = readServerSettings(read);
  const channel = readChannelSettings(read);
  const config: Config = {
    ...server,
    ...readStudySettings(read),
    llm: readLlmSettings(read),
    prompts: readPromptSettings(read),
    channel,
    safety: readSafetySettings(read),
    startupNotes: [],
  };
  checkServerDurations(read, server, channel.webhookToleranceMs);
  config.startupNotes = [...(options.notes ?? []), ...aliased.notes, ...unreadSettingNotes(aliased.env, read.names)];
  refuseProblems(read);
  return deepFreeze(config);
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}
