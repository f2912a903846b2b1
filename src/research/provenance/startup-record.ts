/**
 * At start-up, the effective configuration (secrets removed) and the prompt versions are recorded as a
 * `configuration-recorded` event, so a study can show what ran when.
 */
import type { Config } from '../../config.ts';
import type { EventRepository } from '../../store/ports/conversation-store.ts';
import { type PromptSource, promptVersion } from './prompt-version.ts';

export const CONFIGURATION_RECORDED_EVENT = 'configuration-recorded';

/** Setting names whose value is a secret: reported as set or not, never shown. */
const SECRET_NAME = /(api_?key|token|secret|password|pseudonym_?key)/i;

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '[set]';
  }
}

function redact(value: unknown, key: string): unknown {
  if (value === undefined) return null;
  if (typeof value === 'string' && SECRET_NAME.test(key)) return '[set]';
  if (typeof value === 'string' && /url$/i.test(key)) return withoutPassword(value);
  if (value instanceof Date) return value.toISOString();
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, child]) => [name, redact(child, name)]));
  }
  return value;
}

/** The configuration as recorded: every setting, secrets replaced by `[set]` (or null when unset). */
export function redactedConfiguration(config: Config): Record<string, unknown> {
  return redact(config, '') as Record<string, unknown>;
}

export async function recordStartup(options: {
  events: Pick<EventRepository, 'record'>;
  config: Config;
  prompts: readonly PromptSource[];
  version: string;
  now: Date;
}): Promise<void> {
  await options.events.record({
    type: CONFIGURATION_RECORDED_EVENT,
    data: {
      version: options.version,
      configuration: redactedConfiguration(options.config),
      prompts: options.prompts.map((prompt) => ({ file: prompt.file, version: promptVersion(prompt.text) })),
    },
    createdAt: options.now,
  });
}
