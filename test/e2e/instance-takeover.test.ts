/**
 * A delivery claimed by an instance that is then SIGKILLed, on real `promptpipe serve` processes sharing PostgreSQL:
 * the surviving instance delivers it (again, under the same id) and the participant's later reply after it, without
 * the 10 minutes the job lease used to be.
 *
 * - With the default lease, the delivery in flight on the doomed instance is leased for at most 30 s ahead (as the
 *   database records it), and the survivor delivers it and the reply queued behind it.
 * - With a 10-minute lease, the survivor still takes it over within a minute, long before that lease ends (as the
 *   database records it): a dead instance's jobs are released as soon as its liveness lock is gone.
 *
 * Instance 1's gateway never answers in time, so its delivery stays claimed until the kill. Needs
 * PROMPTPIPE_TEST_PG_URL (skipped with a message otherwise).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Cluster, type Instance, type OutboundPayload, startCluster } from '../support/promptpipe-cluster.ts';
import type { ScriptedChatRequest, ScriptedReply } from '../support/scripted-openai-server.ts';
import { killServer, waitFor } from '../support/server-process.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('Instance takeover tests skipped: PROMPTPIPE_TEST_PG_URL is not set');

const GREETING = 'Welcome! Which habit would you like to build?';
const LATER_MESSAGE = 'I walked today';
const REPLY = `ack:${LATER_MESSAGE}`;
/** Longer than the webhook channel's 10 s timeout would matter: the instance is killed as soon as the request lands. */
const HANG_MS = 20_000;

const phoneOf = (index: number): string => `+1555${String(300_0000 + index).padStart(7, '0')}`;

function coach(request: ScriptedChatRequest): ScriptedReply {
  const messages = request.body.messages;
  const said = messages[messages.findLastIndex((message) => message.role === 'user')]?.content ?? '';
  return { content: said.includes('expecting a greeting') ? GREETING : `ack:${said}` };
}

interface HungDelivery {
  participantId: string;
  phone: string;
  /** The outbound message instance 1 was sending when it was killed. */
  message: OutboundPayload;
  /** Its job as the database held it while instance 1 was sending it. */
  job: { id: string; lease_owner: string; lease_until: Date; leased_for_ms: number };
}

/** The gateway's requests: from which instance, carrying what. */
function requests(cluster: Cluster): { instance: string; message: OutboundPayload }[] {
  return cluster.gateway.requests.map((request) => ({
    instance: new URL(request.url, 'http://gateway').searchParams.get('instance') ?? '',
    message: JSON.parse(request.body) as OutboundPayload,
  }));
}

/**
 * Enrolls participants through instance 1 until one's greeting is claimed by instance 1 (the other instance may claim
 * some), whose gateway holds the request; then the participant writes again through instance 2, and instance 1 is
 * SIGKILLed with that delivery in flight.
 */
async function killInstanceWithDeliveryInFlight(cluster: Cluster): Promise<HungDelivery> {
  const [doomed, survivor] = cluster.instances as [Instance, Instance];
  cluster.gateway.respond = (request) => ({
    status: 200,
    ...(request.url.includes('instance=instance-1') ? { delayMs: HANG_MS } : {}),
  });
  for (let index = 0; index < 10; index += 1) {
    const enrolled = await cluster.api(doomed, 'POST', '/conversation/participants', {
      phone_number: phoneOf(index),
      name: `P${index}`,
      timezone: 'America/Toronto',
    });
    expect(enrolled.status).toBe(201);
    const participantId: string = enrolled.json.result.id;
    const greeting = await waitFor(
      `the greeting of ${participantId}`,
      () => requests(cluster).find((request) => request.message.participant_id === participantId),
      30_000,
      [doomed.process, survivor.process],
    );
    if (greeting.instance !== 'instance-1') continue;
    const rows = await cluster.db.query(
      `select id, lease_owner, lease_until, extract(epoch from lease_until - now()) * 1000 as leased_for_ms
         from jobs where kind = 'deliver_message' and status = 'running' and payload::jsonb -> 'message' ->> 'id' = $1`,
      [greeting.message.id],
    );
    const sent = await cluster.inbound(survivor, {
      from: phoneOf(index),
      text: LATER_MESSAGE,
      id: `gw-later-${index}`,
    });
    expect(sent.status).toBe(202);
    await killServer(doomed.process);
    expect(rows.rows).toHaveLength(1);
    const job = rows.rows[0];
    return {
      participantId,
      phone: phoneOf(index),
      message: greeting.message,
      job: { ...job, leased_for_ms: Number(job.leased_for_ms) },
    };
  }
  throw new Error('instance 1 never claimed a greeting of the 10 participants');
}

/** Waits for the survivor's delivery of the hung message and of the reply queued behind it; checks order and counts. */
async function expectTakenOver(cluster: Cluster, hung: HungDelivery): Promise<void> {
  const survivor = cluster.instances[1] as Instance;
  await waitFor(
    'the hung greeting and the later reply delivered by instance 2',
    () => {
      const fromSurvivor = requests(cluster).filter((request) => request.instance === 'instance-2');
      return (
        fromSurvivor.some((request) => request.message.id === hung.message.id) &&
        fromSurvivor.some((request) => request.message.text === REPLY)
      );
    },
    60_000,
    [survivor.process],
    100,
  );
  const ofParticipant = requests(cluster).filter((request) => request.message.participant_id === hung.participantId);
  // The greeting twice under one id (the at-least-once redelivery of the message in flight), then the reply, in order.
  expect(ofParticipant.map((request) => [request.instance, request.message.text])).toEqual([
    ['instance-1', GREETING],
    ['instance-2', GREETING],
    ['instance-2', REPLY],
  ]);
  expect(new Set(ofParticipant.slice(0, 2).map((request) => request.message.id))).toEqual(new Set([hung.message.id]));
  // Nothing else went out twice.
  const ids = requests(cluster)
    .map((request) => request.message.id)
    .filter((id) => id !== hung.message.id);
  expect(new Set(ids).size).toBe(ids.length);
  const job = await cluster.db.query(`select status, lease_owner, attempts from jobs where id = $1`, [hung.job.id]);
  expect(job.rows).toEqual([{ status: 'completed', lease_owner: expect.stringMatching(/^instance-2#/), attempts: 2 }]);
}

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
}, 30_000);

describe.skipIf(!url)('a delivery in flight on an instance that is SIGKILLed', () => {
  const pgUrl = url ?? '';

  it('is leased for at most 30 s by default, and the survivor delivers it and the reply behind it', {
    timeout: 150_000,
  }, async ({ onTestFailed }) => {
    cluster = await startCluster({ pgUrl, instances: 2, respond: coach, env: { PROMPTPIPE_RECOVERY_INTERVAL: '1s' } });
    const running = cluster;
    onTestFailed(() => console.error(running.describe()));

    const hung = await killInstanceWithDeliveryInFlight(running);
    expect(hung.job.lease_owner).toMatch(/^instance-1#/);
    // Claimed or renewed moments ago: its lease ends at most 30 s after the kill, never 10 minutes.
    expect(hung.job.leased_for_ms).toBeGreaterThan(0);
    expect(hung.job.leased_for_ms).toBeLessThanOrEqual(30_000);

    await expectTakenOver(running, hung);
  });

  it('is taken over long before a 10-minute lease runs out: the dead instance is seen to be dead', {
    timeout: 150_000,
  }, async ({ onTestFailed }) => {
    cluster = await startCluster({
      pgUrl,
      instances: 2,
      respond: coach,
      env: { PROMPTPIPE_RECOVERY_INTERVAL: '1s', PROMPTPIPE_JOB_LEASE: '10m' },
    });
    const running = cluster;
    onTestFailed(() => console.error(running.describe()));

    const hung = await killInstanceWithDeliveryInFlight(running);
    expect(hung.job.leased_for_ms).toBeGreaterThan(9 * 60_000);

    await expectTakenOver(running, hung);
    // Completed by the survivor before the dead instance's lease would have let anyone take it.
    const completed = await running.db.query(`select updated_at from jobs where id = $1`, [hung.job.id]);
    expect(completed.rows[0].updated_at.getTime()).toBeLessThan(hung.job.lease_until.getTime());
  });
});
