/**
 * How every settings module reads the environment: typed look-ups that collect every problem (so a start-up error
 * lists them all) and remember every name read (so a setting set but never read is reported).
 */
import { readFileSync } from 'node:fs';
import { parseDuration } from '../domain/duration.ts';
import { AppError } from '../domain/errors.ts';

/** A mapping file as the reader read it: its variable, path, and parsed JSON (or why it could not be read). */
export interface TemplateFile {
  variable: string;
  path: string;
  json: unknown;
  error?: string;
}

export type Environment = Readonly<Record<string, string | undefined>>;

export class ConfigReader {
  readonly problems: string[] = [];
  private readonly env: Environment;

  /** Every name looked up: a setting that is set but never read is reported (`unreadSettingNotes`). */
  readonly names = new Set<string>();

  /** The environment as given, for the variables other programs share (`shared`). */
  private readonly untracked: Environment;

  constructor(env: Environment) {
    this.untracked = env;
    this.env = new Proxy(env, {
      get: (target, name) => {
        if (typeof name === 'string') this.names.add(name);
        return Reflect.get(target, name);
      },
    });
  }

  string(name: string): string | undefined {
    const value = this.env[name]?.trim();
    return value ? value : undefined;
  }

  /**
   * A variable other programs read too (`NODE_USE_ENV_PROXY`, `HTTP_PROXY`): not one of our settings, so it is not
   * counted as read, or every `NODE_*` and `HTTP*` variable would be reported as a setting set but not read.
   */
  shared(name: string): string | undefined {
    const value = this.untracked[name]?.trim();
    return value ? value : undefined;
  }

  boolean(name: string, fallback: boolean): boolean {
    const value = this.string(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if (['1', 'true', 'yes', 'on'].includes(value)) return true;
    if (['0', 'false', 'no', 'off'].includes(value)) return false;
    this.problems.push(`${name} must be true or false (got "${value}")`);
    return fallback;
  }

  number(name: string, fallback: number, check: (value: number) => boolean, expected: string): number {
    const value = this.string(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || !check(parsed)) {
      this.problems.push(`${name} must be ${expected} (got "${value}")`);
      return fallback;
    }
    return parsed;
  }

  duration(name: string, fallback: string): number {
    const value = this.string(name) ?? fallback;
    const parsed = parseDuration(value);
    if (parsed === undefined) {
      this.problems.push(`${name} must be a duration such as 15m, 3h or 1h30m (got "${value}")`);
      return parseDuration(fallback) ?? 0;
    }
    return parsed;
  }

  /** A comma-separated list of names from `allowed`, without repeats; at least one. */
  channelList<T extends string>(name: string, allowed: readonly T[], fallback: T): T[] {
    const value = this.string(name);
    if (value === undefined) return [fallback];
    const names = value
      .split(',')
      .map((part) => part.trim().toLowerCase())
      .filter((part) => part !== '');
    const unknown = names.filter((part) => !(allowed as readonly string[]).includes(part));
    if (unknown.length > 0 || names.length === 0) {
      this.problems.push(
        `${name} must be a comma-separated list of ${allowed.join(', ')} (got "${value}"${unknown.length > 0 ? `; unknown: ${unknown.join(', ')}` : ''})`,
      );
      return [fallback];
    }
    if (new Set(names).size !== names.length) this.problems.push(`${name} lists a channel twice (got "${value}")`);
    return [...new Set(names)] as T[];
  }

  /** A comma-separated list of words, compared case-insensitively (stored upper-case). */
  keywords(name: string, fallback: readonly string[]): string[] {
    const value = this.string(name);
    if (value === undefined) return [...fallback];
    const words = value
      .split(',')
      .map((word) => word.replace(/\s+/g, '').toUpperCase())
      .filter((word) => word !== '');
    if (words.length === 0) this.problems.push(`${name} must list at least one word (got "${value}")`);
    return words;
  }

  /** The names of the set variables that start with `prefix` (`TWILIO_CONTENT_SID_`), with their values. */
  startingWith(prefix: string): [string, string][] {
    // Object.keys does not go through the read-tracking `get`: only the names found are marked read, by `string`.
    return Object.keys(this.env)
      .filter((name) => name.startsWith(prefix))
      .flatMap((name) => {
        const value = this.string(name);
        return value === undefined ? [] : [[name, value] as [string, string]];
      });
  }

  /** The JSON of the file a variable names, or why it could not be read; undefined when the variable is unset. */
  jsonFile(name: string): TemplateFile | undefined {
    const path = this.string(name);
    if (path === undefined) return undefined;
    try {
      return { variable: name, path, json: JSON.parse(readFileSync(path, 'utf8')) as unknown };
    } catch (error) {
      return { variable: name, path, json: undefined, error: error instanceof Error ? error.message : String(error) };
    }
  }

  /** True when the variable is present but blank (an explicit "off" / "omit"). */
  isBlank(name: string): boolean {
    const value = this.env[name];
    return value !== undefined && value.trim() === '';
  }

  /** The raw text, untrimmed inside; `fallback` only when the variable is absent (blank stays ''). */
  text(name: string, fallback: string): string {
    const value = this.env[name];
    return value === undefined ? fallback : value.trim();
  }

  /** The raw text (trimmed), '' when set blank, undefined only when the variable is absent. */
  optionalText(name: string): string | undefined {
    return this.env[name]?.trim();
  }

  /** A JSON object, or undefined when unset; anything else is a start-up problem naming the variable. */
  jsonObject(name: string): Record<string, unknown> | undefined {
    const value = this.string(name);
    if (value === undefined) return undefined;
    try {
      const parsed: unknown = JSON.parse(value);
      if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
        return parsed as Record<string, unknown>;
      }
      this.problems.push(`${name} must be a JSON object such as {"top_k": 20} (got "${value}")`);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.problems.push(`${name} must be valid JSON (a JSON object): ${reason}`);
    }
    return undefined;
  }

  /** A setting an enabled channel cannot do without. */
  required(name: string, channel: string): string {
    const value = this.string(name);
    if (value === undefined) this.problems.push(`${name} is required when PROMPTPIPE_CHANNEL includes ${channel}`);
    return value ?? '';
  }

  url(name: string, fallback: string): string {
    const value = this.string(name) ?? fallback;
    if (!URL.canParse(value)) this.problems.push(`${name} must be a URL (got "${value}")`);
    return value.replace(/\/+$/, '');
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.string(name)?.toLowerCase();
    if (value === undefined) return fallback;
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name} must be one of ${allowed.join(', ')} (got "${value}")`);
    return fallback;
  }
}

/** Throws `AppError('invalid_input')` listing every problem the reader collected, if any. */
export function refuseProblems(read: ConfigReader): void {
  if (read.problems.length > 0) {
    throw new AppError('invalid_input', `Invalid configuration:\n  - ${read.problems.join('\n  - ')}`, {
      details: read.problems,
    });
  }
}
