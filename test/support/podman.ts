/**
 * podman for the container-image test (test/e2e/container-image.test.ts), with the flags machines without systemd
 * or a container network need and other machines accept: runc when it is installed, the cgroupfs cgroup manager
 * when systemd is not running, host networking, and rlimits within the host's hard limits (podman's defaults exceed
 * them, and runc then cannot start the container).
 *
 * Policy when podman cannot run the test: in CI (`CI` set, as `.ci/run` does) the test FAILS with the reason; on a
 * developer machine it is skipped with a printed notice saying what is missing.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The Dockerfile's default base, built from Debian's packages by scripts/container-base.sh. */
export const BASE_IMAGE = 'localhost/promptpipe-base:bookworm';
/** The CA bundle npm trusts on this machine; given to the image build as its `build-ca` secret (see Dockerfile). */
const HOST_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function hostHardLimit(flag: '-Hn' | '-Hu', ceiling: number): number {
  const value = Number(spawnSync('bash', ['-c', `ulimit ${flag}`], { encoding: 'utf8' }).stdout.trim());
  return Number.isInteger(value) && value > 0 ? Math.min(value, ceiling) : ceiling;
}

/** Global flags: runc when installed (podman's default runtime may be missing), cgroupfs when systemd is not running. */
function globalFlags(): string[] {
  knownGlobalFlags ??= [
    ...(spawnSync('runc', ['--version']).status === 0 ? ['--runtime', 'runc'] : []),
    ...(existsSync('/run/systemd/system') ? [] : ['--cgroup-manager', 'cgroupfs']),
  ];
  return knownGlobalFlags;
}
let knownGlobalFlags: string[] | undefined;

/** For `podman run` and `podman build`: host networking and rlimits the host allows. */
export function containerFlags(): string[] {
  const openFiles = hostHardLimit('-Hn', 65_536);
  const processes = hostHardLimit('-Hu', 4_096);
  return [
    '--network',
    'host',
    '--ulimit',
    `nofile=${openFiles}:${openFiles}`,
    '--ulimit',
    `nproc=${processes}:${processes}`,
  ];
}

/** Runs `podman <args>` with the global flags; never throws for a non-zero exit (the caller reads `code`). */
export function podman(args: string[], timeoutMs = 60_000): Promise<CommandResult> {
  return new Promise((resolve) => {
    const child = spawn('podman', [...globalFlags(), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: timeoutMs,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', (error) => resolve({ code: null, stdout, stderr: `${stderr}${error.message}\n` }));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `podman <args>`'s standard output; throws with the whole output when it fails. */
export async function podmanOutput(args: string[], timeoutMs?: number): Promise<string> {
  const result = await podman(args, timeoutMs);
  if (result.code !== 0) {
    throw new Error(`podman ${args.join(' ')} exited ${result.code}\n${result.stdout}${result.stderr}`);
  }
  return result.stdout.trim();
}

/** Builds the Dockerfile of `contextDirectory` as `tag`, as the README says (`--format docker` keeps HEALTHCHECK). */
export function buildImage(contextDirectory: string, tag: string, timeoutMs: number): Promise<string> {
  const secret = existsSync(HOST_CA_BUNDLE) ? ['--secret', `id=build-ca,src=${HOST_CA_BUNDLE}`] : [];
  return podmanOutput(
    ['build', '--format', 'docker', ...containerFlags(), ...secret, '-t', tag, contextDirectory],
    timeoutMs,
  );
}

/** Whether the test can run here: podman installed, the base image built, and a container started from it. */
export async function podmanAvailability(): Promise<{ run: boolean; reason?: string }> {
  const reason = await unavailableBecause();
  if (reason === undefined) return { run: true };
  if (process.env.CI) throw new Error(`the container image test cannot run in CI: ${reason}`);
  console.warn(`SKIPPING the container image test: ${reason}`);
  return { run: false, reason };
}

async function unavailableBecause(): Promise<string | undefined> {
  if ((await podman(['--version'])).code !== 0) return 'podman is not installed (apt-get install -y podman runc)';
  if ((await podman(['image', 'exists', BASE_IMAGE])).code !== 0) {
    return `the base image ${BASE_IMAGE} is missing (build it, as root: bash scripts/container-base.sh)`;
  }
  const trial = await podman(['run', '--rm', ...containerFlags(), BASE_IMAGE, 'true']);
  if (trial.code !== 0) return `podman cannot run a container here: ${trial.stderr.trim()}`;
  return undefined;
}
