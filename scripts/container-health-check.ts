/**
 * The container image's HEALTHCHECK: `GET /health` on the address the server listens on, inside the container;
 * exits 0 when it answers 200 (`healthy`), 1 otherwise. The address is the server's own setting, `API_ADDR`, read
 * as `parseListenAddress` in src/config.ts reads it (test/scripts/container-health-check.test.ts holds the two
 * together), with a wildcard host reached on loopback.
 *
 * A small script of its own, not a `promptpipe` command: it runs every 30 seconds beside the server, and loading the
 * whole server bundle for one request would cost the container far more memory and CPU than the request itself.
 * Node runs it directly (type stripping) and it imports nothing, so the image needs only what runs the server: the
 * server's sources are not in the image (it runs the bundle), hence config's address parsing repeated here.
 */

/** `API_ADDR` as src/config.ts's `parseListenAddress` accepts it: `:8080`, `127.0.0.1:8080`, `[::1]:8080`, `8080`. */
const LISTEN_ADDRESS = /^(?:\[([^\]]+)\]:|([^:]*):)?(\d+)$/;
/** Listening on every interface: the server is reached on loopback. */
const WILDCARD_HOSTS = new Set(['', '0.0.0.0', '::']);
/** Below the HEALTHCHECK's own timeout, so a hung server is reported by this script, with its reason. */
const TIMEOUT_MS = 4_000;

/**
 * The `/health` URL of a server listening on `apiAddress` (`API_ADDR`; unset or blank is the server's default
 * `:8080`), from the same network namespace.
 */
export function healthUrl(apiAddress: string | undefined): string {
  const address = apiAddress?.trim() || ':8080';
  const match = LISTEN_ADDRESS.exec(address);
  const port = Number(match?.[3]);
  if (!match || port > 65_535)
    throw new Error(`API_ADDR must look like ":8080" or "127.0.0.1:8080" (got "${address}")`);
  const listenHost = match[1] ?? match[2] ?? '';
  const host = WILDCARD_HOSTS.has(listenHost) ? '127.0.0.1' : listenHost;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}/health`;
}

async function main(): Promise<void> {
  const url = healthUrl(process.env.API_ADDR);
  const response = await fetch(url, { signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
}

if (import.meta.main) {
  main().catch((error: unknown) => {
    process.stderr.write(`health check failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
