/**
 * The container image's HEALTHCHECK script: it reaches the server wherever `API_ADDR` makes it listen (the same
 * addresses the server accepts), and its exit status says whether `/health` answered 200 — checked against a real
 * server process, and against a port where nothing listens.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { healthUrl } from '../../scripts/container-health-check.ts';
import { parseListenAddress } from '../../src/config.ts';
import { freePort, REPO_ROOT, type ServerProcess, startServer, stopServer } from '../support/server-process.ts';

describe('the container health check', () => {
  it('asks /health where the server listens, on loopback when it listens on every interface', () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'http://127.0.0.1:8080/health'],
      ['', 'http://127.0.0.1:8080/health'],
      [':8080', 'http://127.0.0.1:8080/health'],
      ['9000', 'http://127.0.0.1:9000/health'],
      ['0.0.0.0:8081', 'http://127.0.0.1:8081/health'],
      [' 127.0.0.1:8082 ', 'http://127.0.0.1:8082/health'],
      ['10.1.2.3:8083', 'http://10.1.2.3:8083/health'],
      ['[::1]:8084', 'http://[::1]:8084/health'],
      ['[::]:8085', 'http://127.0.0.1:8085/health'],
    ];
    for (const [address, url] of cases) {
      expect(healthUrl(address), `API_ADDR=${address}`).toBe(url);
      // The server reads the same port from it (an unset or blank API_ADDR is its default, :8080).
      expect(parseListenAddress(address?.trim() || ':8080')?.port).toBe(Number(new URL(url).port));
    }
  });

  it('refuses, as the server does, an API_ADDR that is not an address', () => {
    for (const address of ['localhost', 'host:port', ':99999', '1.2.3.4:80:80']) {
      expect(parseListenAddress(address), address).toBeUndefined();
      expect(() => healthUrl(address), address).toThrow(`got "${address}"`);
    }
  });

  const servers: ServerProcess[] = [];
  let stateDir = '';
  afterAll(async () => {
    for (const server of servers) await stopServer(server);
    if (stateDir) await rm(stateDir, { recursive: true, force: true });
  });

  it('exits 0 when the server at API_ADDR is healthy, 1 with the reason when nothing answers', async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-health-check-'));
    const server = await startServer({ PATH: process.env.PATH ?? '', PROMPTPIPE_STATE_DIR: stateDir });
    servers.push(server);
    const healthy = await runHealthCheck(new URL(server.baseUrl).host);
    expect(healthy).toEqual({ code: 0, stderr: '' });

    const nobody = await runHealthCheck(`127.0.0.1:${await freePort()}`);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain('health check failed');
  });
});

function runHealthCheck(apiAddress: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/container-health-check.ts'], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', API_ADDR: apiAddress },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('close', (code) => resolve({ code, stderr }));
  });
}
