/**
 * Property-based fuzzing (fast-check) of every endpoint's body, query and path, in process through `inject`:
 * oversized strings, wrong types, unicode, null bytes, deep nesting, prototype keys, non-JSON bodies. Properties:
 * no 5xx ever; every error response is the envelope {"status":"error","message":…}; a rejected request (4xx)
 * changes no stored data (a snapshot of every repository before and after is equal). The number of runs is bounded
 * to keep the suite fast; a failure prints fast-check's seed and counterexample for replay.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiHarness, createApiHarness } from '../support/api-harness.ts';

const RUNS = 30;
let harness: ApiHarness;
let participantId: string;

beforeAll(async () => {
  harness = await createApiHarness({ bodyLimitBytes: 64 * 1024 });
  const ada = await harness.enroll('+15551230001');
  participantId = ada.id;
  await harness.participants.sendOrganiserMessage(ada.id, 'Welcome to the study');
  await harness.inbound.idle();
});
afterAll(async () => {
  await harness.close();
});

async function snapshot(): Promise<string> {
  const { store } = harness;
  const participants = await store.participants.list();
  const perParticipant = await Promise.all(
    participants.map(async (participant) => ({
      flow: await store.flowStates.get(participant.id),
      transcript: await store.transcript.list(participant.id),
    })),
  );
  return JSON.stringify({
    participants,
    perParticipant,
    jobs: await store.jobs.listPending(),
    events: await store.events.list(),
    inbound: await store.inbound.listUnprocessed(),
    clock: harness.clock.now().toISOString(),
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Nasty values

/** Percent-encodes anything, lone surrogates included (as the bytes of their UTF-8 replacement). */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return [...Buffer.from(text, 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
  }
}

const hugeString = fc
  .tuple(fc.constantFrom('a', 'é', '😀', '\u0000', '%', '"', '\\'), fc.integer({ min: 1_000, max: 20_000 }))
  .map(([unit, count]) => unit.repeat(count));
const trickyString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\uFEFF',
    '\uD800',
    '../../etc/passwd',
    "'; DROP TABLE participants; --",
    '<script>alert(1)</script>',
    '+15551230001',
    '+1 555 123 0001\u0000',
    'America/New_York',
    'Mars/Olympus_Mons',
    'active',
    'FEEDBACK',
    '2026-03-02T14:00:00Z',
    '9999-99-99T99:99:99Z',
    '__proto__',
    'constructor',
    '%00',
    '%E0%A4%A',
    'NaN',
    '-1',
    '1e309',
  ),
);
const deepNesting = fc.tuple(fc.integer({ min: 50, max: 3_000 }), fc.boolean()).map(([depth, asArray]) => {
  let value: unknown = 'bottom';
  for (let level = 0; level < depth; level += 1) value = asArray ? [value] : { nested: value };
  return value;
});
const leaf = fc.oneof(
  trickyString,
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 2 ** 53, -(2 ** 63), 1e308, true, false, null),
);
const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: leaf },
  { weight: 1, arbitrary: hugeString },
  { weight: 1, arbitrary: deepNesting },
  { weight: 2, arbitrary: fc.array(leaf, { maxLength: 5 }) },
  { weight: 2, arbitrary: fc.dictionary(trickyString, leaf, { maxKeys: 5 }) },
);

/** Field names the endpoints know, so that wrong types reach the validators, plus random and prototype keys. */
const FIELDS = [
  'phone_number',
  'name',
  'gender',
  'ethnicity',
  'background',
  'timezone',
  'status',
  'target_state',
  'reason',
  'message',
  'text',
  'from',
  'id',
  'timestamp',
  'poll_answer',
  'advance_ms',
  'set_to',
  '__proto__',
  'constructor',
];
const nastyObject = fc.dictionary(fc.oneof(fc.constantFrom(...FIELDS), trickyString), nastyValue, {
  maxKeys: 6,
});
/** A body: a JSON object or any JSON value, or raw text that may not be JSON at all. */
const nastyBody = fc.oneof(
  { weight: 5, arbitrary: nastyObject.map((value) => ({ raw: false as const, value })) },
  { weight: 2, arbitrary: nastyValue.map((value) => ({ raw: false as const, value })) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        trickyString,
        fc.constantFrom('{', '{"a":', '[1,2', '{"a":1}}', 'null', '""', '\u0000{}', '{"a":"\\u0000"}'),
      )
      .map((text) => ({ raw: true as const, value: text })),
  },
);
const nastyQuery = fc
  .dictionary(
    fc.oneof(fc.constantFrom('status', 'limit', 'before', 'purge'), trickyString),
    fc.oneof(
      trickyString,
      hugeString.map((text) => text.slice(0, 3_000)),
    ),
    { maxKeys: 4 },
  )
  .map((query) =>
    Object.entries(query)
      .map(([key, value]) => `${encode(key)}=${encode(value)}`)
      .join('&'),
  );
const nastyId = fc.oneof(
  trickyString.filter((text) => text.length > 0).map(encode),
  hugeString.map((text) => encode(text.slice(0, 4_000))),
  fc.constantFrom('%00', '%E0%A4%A', '%ED%A0%80', '%FF', '..', '%2F', 'conv_nobody', '%20'),
);

// ---------------------------------------------------------------------------------------------------------------
// Endpoints

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';
interface Endpoint {
  method: Method;
  /** `{id}` is replaced by a fuzzed id, or the real participant's id. */
  path: string;
  body: boolean;
}
const ENDPOINTS: Endpoint[] = [
  { method: 'POST', path: '/conversation/participants', body: true },
  { method: 'GET', path: '/conversation/participants', body: false },
  { method: 'GET', path: '/conversation/participants/{id}', body: false },
  { method: 'PUT', path: '/conversation/participants/{id}', body: true },
  { method: 'DELETE', path: '/conversation/participants/{id}', body: false },
  { method: 'GET', path: '/conversation/participants/{id}/history', body: false },
  { method: 'GET', path: '/conversation/participants/{id}/state', body: false },
  { method: 'POST', path: '/conversation/participants/{id}/transition', body: true },
  { method: 'POST', path: '/conversation/participants/{id}/messages', body: true },
  { method: 'GET', path: '/admin/clock', body: false },
  { method: 'POST', path: '/admin/clock', body: true },
  { method: 'POST', path: '/channels/webhook/messages', body: true },
  { method: 'GET', path: '/health', body: false },
  { method: 'GET', path: '/openapi.json', body: false },
];

const request = fc.record({
  endpoint: fc.constantFrom(...ENDPOINTS),
  realId: fc.boolean(),
  id: nastyId,
  query: fc.option(nastyQuery, { nil: undefined }),
  body: nastyBody,
  contentType: fc.constantFrom(
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/xml',
  ),
});

describe('fuzzing every endpoint', () => {
  it('never answers 5xx, always answers errors in the envelope, and a rejected request changes nothing', async () => {
    let before = await snapshot();
    await fc.assert(
      fc.asyncProperty(request, async ({ endpoint, realId, id, query, body, contentType }) => {
        // DELETE with the real id would succeed (and then everything 404s): fuzz deletion with unknown ids only.
        const useRealId = realId && endpoint.method !== 'DELETE';
        const path = endpoint.path.replace('{id}', useRealId ? participantId : id);
        const url = query ? `${path}?${query}` : path;
        const payload = endpoint.body ? (body.raw ? String(body.value) : JSON.stringify(body.value)) : undefined;
        const response = await harness.app.inject({
          method: endpoint.method,
          url,
          ...(payload !== undefined ? { payload, headers: { 'content-type': contentType } } : {}),
        });
        await harness.inbound.idle();
        const what = `${endpoint.method} ${url.slice(0, 200)} → ${response.statusCode} ${response.body.slice(0, 300)}`;
        expect(response.statusCode, what).toBeLessThan(500);
        if (response.statusCode >= 400) {
          expect(response.json(), what).toEqual({ status: 'error', message: expect.any(String) });
          expect(response.json().message.length, what).toBeGreaterThan(0);
          expect(await snapshot(), `${what}: a rejected request changed stored data`).toBe(before);
        } else {
          // An accepted request may change data (a valid clock advance, a message): it is the new baseline.
          before = await snapshot();
        }
      }),
      { numRuns: RUNS * ENDPOINTS.length, interruptAfterTimeLimit: 30_000 },
    );
  }, 60_000);
});
