/**
 * The container image, built from this working tree with podman and run as a study's IT would run it: its state on a
 * volume, a participant enrolled, the server SIGKILLed (a crash, an OOM kill) and the container started again →
 * healthy with that participant; `podman stop` → the server shuts down gracefully, well before podman would kill it.
 * The image runs node itself as pid 1 (what `npm start` runs, without npm) as a user other than root, and carries a
 * HEALTHCHECK that the container passes. Needs podman and the base image (test/support/podman.ts says when it skips).
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCommand } from '../../scripts/start-command.ts';
import { buildImage, containerFlags, podman, podmanAvailability, podmanOutput } from '../support/podman.ts';
import { freePort, REPO_ROOT, waitFor } from '../support/server-process.ts';

const availability = await podmanAvailability();

/** A fresh machine builds everything: Debian packages, Node, `npm ci`, the bundle. */
const BUILD_TIMEOUT_MS = 15 * 60_000;
const STOP_TIMEOUT_SECONDS = 30;

describe.skipIf(!availability.run)('the container image', () => {
  const unique = `${process.pid}-${Date.now().toString(36)}`;
  const image = `localhost/promptpipe-test:${unique}`;
  const container = `promptpipe-test-${unique}`;
  let volume = '';
  let baseUrl = '';

  beforeAll(async () => {
    await buildImage(REPO_ROOT, image, BUILD_TIMEOUT_MS);
    volume = await mkdtemp(join(tmpdir(), 'promptpipe-container-volume-'));
  }, BUILD_TIMEOUT_MS);

  afterAll(async () => {
    await podman(['rm', '--force', '--time', '0', container]);
    await podman(['rmi', '--force', image]);
    // Rootless podman gives the volume to a user of its own namespace (`:U`), whose files only podman can remove.
    if (volume)
      await rm(volume, { recursive: true, force: true }).catch(() => podman(['unshare', 'rm', '-rf', volume]));
  }, 60_000);

  it('runs what npm start runs, as node itself, as a user other than root, with a HEALTHCHECK on /health', async () => {
    const inspected = JSON.parse(await podmanOutput(['image', 'inspect', image]))[0] as {
      Config: { User?: string; Entrypoint?: string[]; Cmd?: string[]; Env?: string[]; Volumes?: object };
      Healthcheck?: { Test?: string[] };
    };
    const npmStart = startCommand({});
    expect([...(inspected.Config.Entrypoint ?? []), ...(inspected.Config.Cmd ?? [])]).toEqual([
      'node',
      ...npmStart.nodeArguments,
    ]);
    for (const [name, value] of Object.entries(npmStart.environment)) {
      expect(inspected.Config.Env).toContain(`${name}=${value}`);
    }
    expect(inspected.Config.Env).toEqual(
      expect.arrayContaining(['PROMPTPIPE_ENV_FILE=', 'PROMPTPIPE_STATE_DIR=/data']),
    );
    expect(Object.keys(inspected.Config.Volumes ?? {})).toEqual(['/data']);
    const user = (inspected.Config.User ?? '').split(':')[0];
    expect(user, 'the image runs as a numeric user').toMatch(/^\d+$/);
    expect(Number(user)).not.toBe(0);
    expect(inspected.Healthcheck?.Test).toEqual(['CMD', 'node', 'scripts/container-health-check.ts']);
  });

  it('comes back healthy with its participant after kill -9 of the server, and stops gracefully', {
    timeout: 240_000,
  }, async () => {
    await startContainer();
    expect(await podmanOutput(['exec', container, 'id', '-u'])).not.toBe('0');
    const firstPid = Number(await podmanOutput(['inspect', '--format', '{{.State.Pid}}', container]));
    const status = await readFile(`/proc/${firstPid}/status`, 'utf8');
    expect(status, 'the server process itself, as the host sees it').toMatch(/^Uid:\s+[1-9]\d*\s/m);

    const enrolled = await fetch(`${baseUrl}/conversation/participants`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: '+15551239876', name: 'Ada', timezone: 'Europe/Berlin' }),
    });
    expect(enrolled.status, await logs()).toBe(201);
    const { result: participant } = (await enrolled.json()) as { result: { id: string } };
    expect(await readdir(volume), 'the database is on the volume').toContain('promptpipe.db');

    // A crash: SIGKILL to the container's main process, the server (no shell or npm in between).
    process.kill(firstPid, 'SIGKILL');
    expect(await podmanOutput(['wait', container])).toBe('137');

    await podmanOutput(['start', container]);
    await waitUntilServing();
    const found = await fetch(`${baseUrl}/conversation/participants/${participant.id}`);
    expect(found.status, await logs()).toBe(200);
    expect(((await found.json()) as { result: { name: string } }).result.name).toBe('Ada');
    // The image's own HEALTHCHECK, run now rather than at its interval (podman schedules it only through systemd).
    expect((await podman(['healthcheck', 'run', container])).code, await logs()).toBe(0);
    expect(await podmanOutput(['inspect', '--format', '{{.State.Health.Status}}', container])).toBe('healthy');

    // Graceful: the server's own exit code 0. Past the timeout podman would SIGKILL it, and the code would be 137.
    await podmanOutput(['stop', '--time', String(STOP_TIMEOUT_SECONDS), container], (STOP_TIMEOUT_SECONDS + 30) * 1000);
    expect(await podmanOutput(['inspect', '--format', '{{.State.ExitCode}}', container]), await logs()).toBe('0');
    const messages = (await logs())
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { msg?: string }).msg);
    // The killed server never said "stopped"; the restarted one did, last, after its own start.
    expect(messages.filter((message) => message === 'stopped')).toHaveLength(1);
    expect(messages.lastIndexOf('stopped')).toBeGreaterThan(messages.lastIndexOf('PromptPipe is running'));
  });

  async function logs(): Promise<string> {
    const result = await podman(['logs', container]);
    return `${result.stdout}${result.stderr}`;
  }

  /** Waits for `/health` to be answered by this container (another test's server may have taken the port). */
  async function waitUntilServing(): Promise<void> {
    await waitFor(
      `${container} to answer /health`,
      async () => {
        const state = await podmanOutput(['inspect', '--format', '{{.State.Status}}', container]);
        if (state !== 'running') throw new Error(`${container} is ${state}\n${await logs()}`);
        const response = await fetch(`${baseUrl}/health`).catch(() => undefined);
        if (response?.status !== 200) return false;
        return ((await response.json()) as { instance_id?: string }).instance_id === container;
      },
      60_000,
      [],
      250,
    );
  }

  /** `podman run -d` on a free port; again on another one when the port was taken between the probe and the bind. */
  async function startContainer(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      const address = `127.0.0.1:${await freePort()}`;
      baseUrl = `http://${address}`;
      await podmanOutput([
        'run',
        '--detach',
        '--name',
        container,
        ...containerFlags(),
        '--volume',
        `${volume}:/data:U`,
        '--env',
        `API_ADDR=${address}`,
        '--env',
        `PROMPTPIPE_INSTANCE_ID=${container}`,
        image,
      ]);
      try {
        await waitUntilServing();
        return;
      } catch (error) {
        if (attempt >= 3 || !(await logs()).includes('EADDRINUSE')) throw error;
        await podman(['rm', '--force', '--time', '0', container]);
      }
    }
  }
});
