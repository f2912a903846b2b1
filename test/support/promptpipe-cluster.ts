/**
 * Several real `promptpipe serve` processes on one PostgreSQL schema, behind no load balancer: the test chooses the
 * instance of each request. With a scripted model server and a recording webhook gateway shared by all of them (each
 * instance's deliveries reach it at `?instance=<instance id>`).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { type HttpReceiver, startHttpReceiver } from './http-receiver.ts';
import {
  type ScriptedOpenAiServer,
  type ScriptedResponder,
  startScriptedOpenAiServer,
} from './scripted-openai-server.ts';
import { describeOutput, type ServerProcess, startServer, stopServer } from './server-process.ts';

export const CLUSTER_API_TOKEN = 'cluster-api-token';
export const CLUSTER_WEBHOOK_SECRET = 'cluster-webhook-secret';

// biome-ignore lint/suspicious/noExplicitAny: JSON read loosely by the tests
export type Json = any;

export interface OutboundPayload {
  id: string;
  participant_id: string;
  to: string;
  kind: 'text' | 'poll';
  text: string;
  poll?: { id: string; question: string; options: string[] };
}

export interface Instance {
  readonly id: string;
  readonly process: ServerProcess;
}

export interface Cluster {
  readonly schema: string;
  readonly instances: Instance[];
  readonly model: ScriptedOpenAiServer;
  readonly gateway: HttpReceiver;
  /** A client on the cluster's schema (for counting rows). */
  readonly db: pg.Client;
  api(
    instance: Instance,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Json }>;
  /** A participant's message through the signed webhook of `instance`. Rejects when the instance is unreachable. */
  inbound(instance: Instance, payload: Record<string, unknown>): Promise<{ status: number; json: Json }>;
  delivered(): OutboundPayload[];
  describe(): string;
  close(): Promise<void>;
}

/** `PROMPTPIPE_TEST_PG_URL` with the schema as the search path of every connection. */
export function urlWithSchema(url: string, schema: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

export async function startCluster(options: {
  pgUrl: string;
  instances: number;
  respond: ScriptedResponder;
  env?: Record<string, string>;
}): Promise<Cluster> {
  const schema = `promptpipe_cluster_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: options.pgUrl });
  await admin.connect();
  await admin.query(`create schema "${schema}"`);
  await admin.end();
  const databaseUrl = urlWithSchema(options.pgUrl, schema);
  const db = new pg.Client({ connectionString: databaseUrl });
  await db.connect();

  const stateDir = await mkdtemp(join(tmpdir(), 'promptpipe-cluster-'));
  const model = await startScriptedOpenAiServer({ respond: options.respond });
  const gateway = await startHttpReceiver();
  const instances: Instance[] = [];

  /** Signs `<timestamp>.<body>` at the real time, as a gateway does (docs/api.md, Signatures). */
  const signatureHeaders = (body: string): Record<string, string> => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac('sha256', CLUSTER_WEBHOOK_SECRET).update(`${timestamp}.${body}`).digest('hex');
    return { 'x-promptpipe-timestamp': timestamp, 'x-promptpipe-signature': `sha256=${signature}` };
  };

  const cluster: Cluster = {
    schema,
    instances,
    model,
    gateway,
    db,
    async api(instance, method, path, body) {
      const response = await fetch(`${instance.process.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${CLUSTER_API_TOKEN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: response.status, json: await response.json() };
    },
    async inbound(instance, payload) {
      const body = JSON.stringify(payload);
      const response = await fetch(`${instance.process.baseUrl}/channels/webhook/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signatureHeaders(body) },
        body,
      });
      return { status: response.status, json: await response.json() };
    },
    delivered: () => gateway.requests.map((request) => JSON.parse(request.body) as OutboundPayload),
    describe: () => instances.map((instance) => describeOutput(instance.process, `instance ${instance.id}`)).join('\n'),
    async close() {
      // Every instance is stopped and everything cleaned up before a failure (a leaked credential) is reported.
      const exits = await Promise.allSettled(instances.map((instance) => stopServer(instance.process, 10_000)));
      await db.end().catch(() => undefined);
      await model.close();
      await gateway.close();
      await rm(stateDir, { recursive: true, force: true });
      const cleanup = new pg.Client({ connectionString: options.pgUrl });
      await cleanup.connect();
      try {
        await cleanup.query(`drop schema if exists "${schema}" cascade`);
      } finally {
        await cleanup.end();
      }
      const failure = exits.find((exit) => exit.status === 'rejected');
      if (failure) throw failure.reason;
    },
  };

  const env = (index: number): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    DATABASE_URL: databaseUrl,
    PROMPTPIPE_INSTANCE_ID: `instance-${index + 1}`,
    PROMPTPIPE_STATE_DIR: stateDir,
    OPENAI_BASE_URL: model.baseUrl,
    OPENAI_API_KEY: 'test',
    GENAI_MODEL: 'scripted',
    PROMPTPIPE_CHANNEL: 'webhook',
    // The query names the sender, so a test can tell (and answer differently) each instance's deliveries.
    PROMPTPIPE_WEBHOOK_URL: `${gateway.url}?instance=instance-${index + 1}`,
    PROMPTPIPE_WEBHOOK_SECRET: CLUSTER_WEBHOOK_SECRET,
    PROMPTPIPE_API_TOKEN: CLUSTER_API_TOKEN,
    LOG_LEVEL: 'warn',
    ...options.env,
  });

  try {
    // The first instance migrates the fresh schema; the others start together once it is there.
    instances.push({ id: 'instance-1', process: await startServer(env(0), 30_000) });
    const others = await Promise.all(
      Array.from({ length: options.instances - 1 }, (_, offset) => startServer(env(offset + 1), 30_000)),
    );
    others.forEach((process, offset) => {
      instances.push({ id: `instance-${offset + 2}`, process });
    });
  } catch (error) {
    await cluster.close().catch(() => undefined);
    throw error;
  }
  return cluster;
}
