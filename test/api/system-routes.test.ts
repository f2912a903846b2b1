import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ApiHarness, createApiHarness } from '../support/api-harness.ts';

let harness: ApiHarness;
beforeEach(async () => {
  harness = await createApiHarness();
});
afterEach(async () => {
  await harness.close();
});

describe('GET /health', () => {
  it('reports healthy with the number of active participants', async () => {
    await harness.enroll('+15551230001');
    await harness.enroll('+15551230002', { status: 'withdrawn' });
    const response = await harness.call('GET', '/health');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ status: 'healthy', timestamp: expect.any(String), active_participants: 1 });
  });

  it('answers 503 when the database is unreachable', async () => {
    const ping = harness.store.ping;
    harness.store.ping = async () => {
      throw new Error('connection refused');
    };
    try {
      const response = await harness.call('GET', '/health');
      expect(response.statusCode).toBe(503);
      expect(response.json()).toMatchObject({ status: 'unhealthy', message: 'database unreachable' });
    } finally {
      harness.store.ping = ping;
    }
  });
});

describe('GET /metrics', () => {
  it('serves the Prometheus text with every PromptPipe metric', async () => {
    const ada = await harness.enroll();
    await harness.participants.sendOrganiserMessage(ada.id, 'hello');
    harness.metrics.recordLlmCall({
      purpose: 'intake',
      model: 'm',
      outcome: 'success',
      durationSeconds: 1.2,
      promptTokens: 100,
      completionTokens: 20,
    });
    harness.metrics.recordToolCall('save_user_profile', 'success');
    harness.metrics.recordStateTransition('INTAKE', 'FEEDBACK', 'tool');
    harness.metrics.recordJobLateness('deliver_message', 0.02);
    harness.metrics.recordOutboundMessage('webhook', 'delivered');
    harness.metrics.recordInboundMessage('webhook');
    const response = await harness.call('GET', '/metrics');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/plain');
    const text = response.body;
    expect(text).toContain('promptpipe_inbound_messages_total{channel="webhook"} 1');
    expect(text).toContain('promptpipe_outbound_messages_total{channel="webhook",outcome="delivered"} 1');
    expect(text).toContain('promptpipe_llm_calls_total{purpose="intake",model="m",outcome="success"} 1');
    expect(text).toContain('promptpipe_llm_call_duration_seconds_bucket');
    expect(text).toContain('promptpipe_llm_tokens_total{purpose="intake",model="m",type="prompt"} 100');
    expect(text).toContain('promptpipe_llm_errors_total');
    expect(text).toContain('promptpipe_tool_calls_total{tool="save_user_profile",outcome="success"} 1');
    expect(text).toContain('promptpipe_state_transitions_total{from="INTAKE",to="FEEDBACK",source="tool"} 1');
    expect(text).toContain('promptpipe_pending_jobs{kind="deliver_message"} 1');
    expect(text).toContain('promptpipe_job_lateness_seconds_bucket');
  });
});

describe('GET /openapi.json', () => {
  it('documents every route of the server', async () => {
    const response = await harness.call('GET', '/openapi.json');
    expect(response.statusCode).toBe(200);
    const document = response.json();
    expect(document.openapi).toMatch(/^3\./);
    const documented = new Set<string>();
    for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(operations)) {
        if (method !== 'parameters') documented.add(`${method.toUpperCase()} ${path}`);
      }
    }
    const served = new Set(routesOf(harness));
    expect([...served].filter((route) => !documented.has(route))).toEqual([]);
    expect(served.size).toBeGreaterThanOrEqual(14);
    const enroll = document.paths['/conversation/participants'].post;
    expect(enroll.requestBody.content['application/json'].schema.required).toEqual(['phone_number']);
  });
});

describe('unknown routes', () => {
  it('answer 404 with an envelope', async () => {
    const response = await harness.call('GET', '/nope');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ status: 'error', message: 'no route GET /nope' });
  });
});

/**
 * `METHOD /path` of every route the server serves, read from Fastify's route tree (`printRoutes`), with `:id` written
 * as OpenAPI's `{id}`. HEAD routes are Fastify's implicit twins of GET routes.
 */
function routesOf(harness: ApiHarness): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of harness.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ├└─]*?)(\/\S*) \(([^)]+)\)$/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(match[2] ?? '');
    for (const method of (match[3] ?? '').split(', ')) {
      if (method !== 'HEAD') routes.push(`${method} ${stack.join('').replace(':id', '{id}')}`);
    }
  }
  return routes;
}
