/**
 * compose.yaml, checked without running it (no image registry here to pull PostgreSQL from): it parses, and the
 * server it describes reaches the PostgreSQL service it starts, needs a token, and is checked and stopped as the
 * image intends. The Dockerfile, the base-image script and the container test name the same base image.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { BASE_IMAGE } from '../support/podman.ts';
import { REPO_ROOT } from '../support/server-process.ts';

interface ComposeService {
  build?: { context?: string; args?: Record<string, string> };
  image?: string;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition?: string }>;
  healthcheck?: { test?: string[] };
  volumes?: string[];
  stop_grace_period?: string;
}

const compose = parse(readFileSync(`${REPO_ROOT}compose.yaml`, 'utf8')) as {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
};
const dockerfile = readFileSync(`${REPO_ROOT}Dockerfile`, 'utf8');

/** Compose's `${NAME}`, `${NAME:-default}` and `${NAME:?error}` substitution, with `values` as the environment. */
function substitute(text: string, values: Record<string, string>): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([-?])([^}]*))?\}/g, (_match, name: string, kind, rest) => {
    const value = values[name];
    if (value) return value;
    if (kind === '?') throw new Error(`${name} is required: ${rest}`);
    return kind === '-' ? rest : '';
  });
}

describe('compose.yaml', () => {
  const server = compose.services.promptpipe as ComposeService;
  const postgres = compose.services.postgres as ComposeService;

  it('builds the server from this repository and runs PostgreSQL 16', () => {
    expect(server.build?.context).toBe('.');
    expect(postgres.image).toMatch(/^postgres:16\b/);
  });

  it("points DATABASE_URL at the PostgreSQL service's database, user and password", () => {
    const environment = { POSTGRES_PASSWORD: 's3cret', PROMPTPIPE_API_TOKEN: 'a-token-of-the-study' };
    const url = new URL(substitute(server.environment?.DATABASE_URL ?? '', environment));
    const database = Object.fromEntries(
      Object.entries(postgres.environment ?? {}).map(([name, value]) => [name, substitute(value, environment)]),
    );
    expect(url.protocol).toBe('postgres:');
    expect(url.hostname).toBe('postgres');
    expect(url.port).toBe('5432');
    expect(url.username).toBe(database.POSTGRES_USER);
    expect(url.password).toBe(database.POSTGRES_PASSWORD);
    expect(url.pathname).toBe(`/${database.POSTGRES_DB}`);
    expect(server.depends_on?.postgres?.condition).toBe('service_healthy');
    expect(postgres.healthcheck?.test?.[0]).toBe('CMD');
  });

  it('keeps the database on a named volume', () => {
    const [volume, path] = (postgres.volumes?.[0] ?? '').split(':');
    expect(path).toBe('/var/lib/postgresql/data');
    expect(Object.keys(compose.volumes ?? {})).toContain(volume);
  });

  it('refuses to start without an API token or a database password, instead of serving an open API', () => {
    const token = server.environment?.PROMPTPIPE_API_TOKEN ?? '';
    expect(substitute(token, { PROMPTPIPE_API_TOKEN: 'a-token-of-the-study' })).toBe('a-token-of-the-study');
    expect(() => substitute(token, {})).toThrow('PROMPTPIPE_API_TOKEN is required');
    expect(() => substitute(server.environment?.DATABASE_URL ?? '', {})).toThrow('POSTGRES_PASSWORD is required');
  });

  it("checks the server with the image's HEALTHCHECK and gives it the stop timeout", () => {
    const healthCheck = /^HEALTHCHECK [^\n]*\\\n\s*CMD (\[.*\])$/m.exec(dockerfile)?.[1];
    expect(healthCheck, 'the Dockerfile has a HEALTHCHECK … CMD [...]').toBeDefined();
    expect(server.healthcheck?.test).toEqual(['CMD', ...(JSON.parse(healthCheck as string) as string[])]);
    expect(server.stop_grace_period).toBe('30s');
  });
});

describe('the base image', () => {
  it('is the one scripts/container-base.sh builds, by default in the Dockerfile and compose.yaml', () => {
    const script = readFileSync(`${REPO_ROOT}scripts/container-base.sh`, 'utf8');
    expect(/^IMAGE=(\S+)$/m.exec(script)?.[1]).toBe(BASE_IMAGE);
    expect(/^ARG BASE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1]).toBe(BASE_IMAGE);
    const args = compose.services.promptpipe?.build?.args ?? {};
    expect(substitute(args.BASE_IMAGE ?? '', {})).toBe(BASE_IMAGE);
    expect(substitute(args.BASE_IMAGE ?? '', { PROMPTPIPE_BASE_IMAGE: 'debian:bookworm-slim' })).toBe(
      'debian:bookworm-slim',
    );
  });
});
