/**
 * Several real `promptpipe serve` processes on one PostgreSQL schema (issue 11), proven with counts:
 * - 50 participants × 10 messages sent alternately to 3 instances: every message answered exactly once, each
 *   participant's messages processed in order, no two turns of one participant overlapping (the scripted model
 *   records when each turn's LLM request arrived and when it was answered);
 * - a day of timers for 100 participants on the shared manual clock (2 instances): each daily prompt and each
 *   reminder delivered exactly once, and the jobs ran on both instances;
 * - SIGKILL of one of 3 instances in the middle of a load: the survivors finish its work, nothing lost, no message
 *   answered twice (a delivery repeated by a takeover carries the same idempotency id).
 *
 * Needs PROMPTPIPE_TEST_PG_URL (skipped with a message otherwise, like test/store/postgres-store.test.ts). About 80 s
 * on an idle 2-core machine; the time limits are generous because CI machines are not idle.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DAILY_PROMPT_REMINDER_MESSAGE } from '../../src/scheduling/timers/daily-prompt-reminder.ts';
import { type Cluster, type Instance, type Json, startCluster } from '../support/promptpipe-cluster.ts';
import type { ScriptedChatRequest, ScriptedReply } from '../support/scripted-openai-server.ts';
import { waitFor } from '../support/server-process.ts';

const url = process.env['PROMPTPIPE_TEST_PG_URL'];
if (!url) console.warn('Several-instances tests skipped: PROMPTPIPE_TEST_PG_URL is not set');

/** Monday 2026-03-02, 09:00 in Toronto. */
const CLOCK_START = '2026-03-02T14:00:00.000Z';
const DAILY_PROMPT = 'After breakfast, walk to the end of the street and back.';
const GREETING = 'Welcome! Which habit would you like to build?';
const SCHEDULE_ME = 'please schedule my daily prompt at 9';

const phoneOf = (index: number): string => `+1555${String(200_0000 + index).padStart(7, '0')}`;
const messageText = (participant: number, message: number): string => `p${participant}-m${message}`;
const replyTo = (text: string): string => `ack:${text}`;
const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

interface Turn {
  participant: number;
  message: number;
  start: number;
  end: number;
}

function lastUserMessage(request: ScriptedChatRequest): string {
  const messages = request.body.messages;
  const index = messages.findLastIndex((message) => message.role === 'user');
  return messages[index]?.content ?? '';
}

function toolResultsOfTurn(request: ScriptedChatRequest): number {
  const messages = request.body.messages;
  const index = messages.findLastIndex((message) => message.role === 'user');
  return messages.slice(index + 1).filter((message) => message.role === 'tool').length;
}

/** The coach: greets, schedules on request, writes the daily prompt, and answers `pX-mY` with `ack:pX-mY`. */
function createCoach(turns: Turn[], turnDelayMs: number) {
  return async (request: ScriptedChatRequest): Promise<ScriptedReply> => {
    const system = request.body.messages[0]?.content ?? '';
    const said = lastUserMessage(request);
    if (system.startsWith('You write one short daily habit prompt')) return { content: DAILY_PROMPT };
    if (said.includes('expecting a greeting')) return { content: GREETING };
    if (said === SCHEDULE_ME) {
      // One model round with the three calls (run in order), then the wrap-up.
      if (toolResultsOfTurn(request) > 0) return { content: 'All set: every morning before 9.' };
      return {
        toolCalls: [
          {
            name: 'save_user_profile',
            arguments: {
              habit_domain: 'walking',
              motivational_frame: 'energy',
              preferred_time: '09:00',
              prompt_anchor: 'after breakfast',
            },
          },
          { name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '09:00' } },
          { name: 'transition_state', arguments: { target_state: 'FEEDBACK', reason: 'intake complete' } },
        ],
      };
    }
    const match = /^p(\d+)-m(\d+)$/.exec(said);
    if (match) {
      const turn: Turn = { participant: Number(match[1]), message: Number(match[2]), start: Date.now(), end: 0 };
      turns.push(turn);
      await sleep(turnDelayMs);
      turn.end = Date.now();
      return { content: replyTo(said) };
    }
    return { content: `(unscripted) ${said.slice(0, 60)}` };
  };
}

/** Enrolls `count` participants, spreading the requests over the instances; returns their ids by index. */
async function enrollAll(cluster: Cluster, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, index) => {
      const instance = cluster.instances[index % cluster.instances.length] as Instance;
      const enrolled = await cluster.api(instance, 'POST', '/conversation/participants', {
        phone_number: phoneOf(index),
        name: `P${index}`,
        timezone: 'America/Toronto',
      });
      if (enrolled.status !== 201) throw new Error(`enrolment ${index}: ${JSON.stringify(enrolled.json)}`);
      return enrolled.json.result.id as string;
    }),
  );
}

/** Enrolls `count` participants (enrollAll) and waits until each has been greeted. */
async function enrollGreeted(cluster: Cluster, count: number): Promise<string[]> {
  const ids = await enrollAll(cluster, count);
  await waitFor('every greeting', () => (deliveriesByText(cluster).get(GREETING)?.ids.size ?? 0) === count, 60_000);
  return ids;
}

/** The distinct outbound ids that carried each text, and how many requests carried it (retries included). */
function deliveriesByText(cluster: Cluster): Map<string, { ids: Set<string>; requests: number }> {
  const byText = new Map<string, { ids: Set<string>; requests: number }>();
  for (const message of cluster.delivered()) {
    const entry = byText.get(message.text) ?? { ids: new Set<string>(), requests: 0 };
    entry.ids.add(message.id);
    entry.requests += 1;
    byText.set(message.text, entry);
  }
  return byText;
}

/** Every message of a load, in order: participant p's message m, for each p and each m. */
function* loadMessages(
  participants: number,
  perParticipant: number,
): Generator<[participant: number, message: number]> {
  for (let participant = 0; participant < participants; participant += 1) {
    for (let message = 0; message < perParticipant; message += 1) yield [participant, message];
  }
}

/** How many of a load's messages have had their reply delivered. */
function answeredCount(cluster: Cluster, participants: number, perParticipant: number): number {
  const byText = deliveriesByText(cluster);
  let count = 0;
  for (const [participant, message] of loadMessages(participants, perParticipant)) {
    if (byText.has(replyTo(messageText(participant, message)))) count += 1;
  }
  return count;
}

/** Every pair of turns of one participant: the later one started after the earlier one ended. */
function overlappingTurns(turns: readonly Turn[]): string[] {
  const byParticipant = new Map<number, Turn[]>();
  for (const turn of turns) byParticipant.set(turn.participant, [...(byParticipant.get(turn.participant) ?? []), turn]);
  const overlaps: string[] = [];
  for (const [participant, list] of byParticipant) {
    const sorted = list.toSorted((a, b) => a.start - b.start);
    for (let index = 1; index < sorted.length; index += 1) {
      const previous = sorted[index - 1] as Turn;
      const current = sorted[index] as Turn;
      if (current.start < previous.end) {
        overlaps.push(`p${participant}: m${current.message} started before m${previous.message} ended`);
      }
    }
  }
  return overlaps;
}

let cluster: Cluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
}, 30_000);

/**
 * Three instances on the manual clock under a load of messages: the coach records each turn, `turnDelayMs` long;
 * `recoveryInterval` is how often an instance looks for a dead one's work.
 */
async function startLoadCluster(
  pgUrl: string,
  turnDelayMs: number,
  recoveryInterval: string,
): Promise<{ running: Cluster; turns: Turn[] }> {
  const turns: Turn[] = [];
  cluster = await startCluster({
    pgUrl,
    instances: 3,
    respond: createCoach(turns, turnDelayMs),
    env: {
      PROMPTPIPE_CLOCK: 'manual',
      PROMPTPIPE_CLOCK_START: CLOCK_START,
      PROMPTPIPE_RECOVERY_INTERVAL: recoveryInterval,
    },
  });
  return { running: cluster, turns };
}

describe.skipIf(!url)('several instances on one PostgreSQL', () => {
  const pgUrl = url ?? '';

  it('answers 50 participants × 10 messages sent alternately to 3 instances exactly once, in order, one turn at a time', {
    timeout: 180_000,
  }, async ({ onTestFailed }) => {
    const { running, turns } = await startLoadCluster(pgUrl, 10, '2s');
    onTestFailed(() => console.error(running.describe()));
    const { instances } = running;

    for (const [index, instance] of instances.entries()) {
      const health = await fetch(`${instance.process.baseUrl}/health`).then((response) => response.json());
      expect(health).toMatchObject({ status: 'healthy', instance_id: `instance-${index + 1}` });
    }

    const participants = 50;
    const perParticipant = 10;
    const ids = await enrollGreeted(running, participants);

    // Each participant writes their messages one after the other (each acknowledged before the next), and each
    // message goes to the next instance in turn: message m of participant p reaches instance (p + m) mod 3.
    await Promise.all(
      Array.from({ length: participants }, async (_, participant) => {
        for (let message = 0; message < perParticipant; message += 1) {
          const instance = instances[(participant + message) % instances.length] as Instance;
          const sent = await running.inbound(instance, {
            from: phoneOf(participant),
            text: messageText(participant, message),
            id: `gw-${participant}-${message}`,
          });
          expect(sent.status).toBe(202);
        }
      }),
    );

    const expected = participants * perParticipant;
    const answered = () => answeredCount(running, participants, perParticipant);
    await waitFor(
      `${expected} replies`,
      () => answered() === expected,
      60_000,
      instances.map((i) => i.process),
      100,
    );

    // Exactly once: one turn per message, one reply per message, delivered once.
    const byText = deliveriesByText(running);
    for (const [participant, message] of loadMessages(participants, perParticipant)) {
      const text = messageText(participant, message);
      expect(turns.filter((turn) => turn.participant === participant && turn.message === message)).toHaveLength(1);
      expect(byText.get(replyTo(text))).toEqual({ ids: expect.any(Set), requests: 1 });
      expect(byText.get(replyTo(text))?.ids.size).toBe(1);
    }
    expect(turns).toHaveLength(expected);

    // Order: each participant's turns ran m0, m1, …, m9, whichever instance received each message.
    for (let participant = 0; participant < participants; participant += 1) {
      const order = turns
        .filter((turn) => turn.participant === participant)
        .toSorted((a, b) => a.start - b.start)
        .map((turn) => turn.message);
      expect(order).toEqual(Array.from({ length: perParticipant }, (_, message) => message));
    }
    // No two turns of one participant at the same time.
    expect(overlappingTurns(turns)).toEqual([]);
    // The replies reached the gateway in the same order, whichever instance delivered each.
    const delivered = running.delivered();
    for (let participant = 0; participant < participants; participant += 1) {
      const replies = delivered
        .map((message) => message.text)
        .filter((text) => text.startsWith(`ack:p${participant}-`));
      expect(replies).toEqual(Array.from({ length: perParticipant }, (_, m) => replyTo(messageText(participant, m))));
    }

    // The transcript agrees: every message recorded once, in order.
    const history: Json[] = (
      await running.api(instances[1] as Instance, 'GET', `/conversation/participants/${ids[7]}/history?limit=1000`)
    ).json.result;
    expect(history.filter((entry) => entry.role === 'user').map((entry) => entry.content)).toEqual(
      Array.from({ length: perParticipant }, (_, message) => messageText(7, message)),
    );
    const processed = await running.db.query(
      `select status, count(*)::int as count from inbound_messages group by status order by status`,
    );
    expect(processed.rows).toEqual([{ status: 'processed', count: expected }]);
  });

  it('delivers a day of timers for 100 participants on the shared manual clock exactly once (2 instances)', {
    timeout: 180_000,
  }, async ({ onTestFailed }) => {
    cluster = await startCluster({
      pgUrl,
      instances: 2,
      respond: createCoach([], 0),
      env: {
        PROMPTPIPE_CLOCK: 'manual',
        PROMPTPIPE_CLOCK_START: CLOCK_START,
        AUTO_FEEDBACK_AFTER_PROMPT_ENABLED: 'false',
      },
    });
    const running = cluster;
    onTestFailed(() => console.error(running.describe()));
    const [first, second] = running.instances as [Instance, Instance];

    const participants = 100;
    const ids = await enrollAll(running, participants);
    await Promise.all(
      ids.map(async (_, index) => {
        const sent = await running.inbound(index % 2 === 0 ? first : second, {
          from: phoneOf(index),
          text: SCHEDULE_ME,
          id: `gw-schedule-${index}`,
        });
        expect(sent.status).toBe(202);
      }),
    );
    await waitFor(
      'a daily prompt job for every participant',
      async () => {
        const jobs = await running.db.query(`select count(*)::int as count from jobs where kind = 'daily_prompt'`);
        return jobs.rows[0].count === participants;
      },
      150_000,
      running.instances.map((instance) => instance.process),
      200,
    );

    // The clock is moved on one instance: it answers once every job due by then has run, on either instance.
    const moved = await running.api(first, 'POST', '/admin/clock', { set_to: '2026-03-03T23:00:00.000Z' });
    expect(moved.status).toBe(200);
    expect(moved.json.result.now).toBe('2026-03-03T23:00:00.000Z');
    // The other instance follows the shared time.
    await waitFor('the second instance to follow the clock', async () => {
      const clock = await running.api(second, 'GET', '/admin/clock');
      return clock.json.result.now === '2026-03-03T23:00:00.000Z';
    });

    // Nothing due is left unfinished: the response came after all of it.
    const unfinished = await running.db.query(
      `select count(*)::int as count from jobs where status in ('pending', 'running') and run_at <= $1`,
      ['2026-03-03T23:00:00.000Z'],
    );
    expect(unfinished.rows[0].count).toBe(0);

    const delivered = running.delivered();
    const count = (participantId: string, text: string) =>
      new Set(delivered.filter((m) => m.participant_id === participantId && m.text === text).map((m) => m.id)).size;
    for (const id of ids) {
      expect(count(id, DAILY_PROMPT)).toBe(1);
      expect(count(id, DAILY_PROMPT_REMINDER_MESSAGE)).toBe(1);
    }
    // No delivery went out twice at all (same id repeated).
    const outboundIds = delivered.map((message) => message.id);
    expect(new Set(outboundIds).size).toBe(outboundIds.length);

    // Both instances ran daily-prompt jobs: the work was shared, not done by the one that moved the clock.
    const owners = await running.db.query(
      `select split_part(lease_owner, '#', 1) as instance, count(*)::int as count from jobs
        where kind = 'daily_prompt' and status = 'completed' group by 1 order by 1`,
    );
    expect(owners.rows.map((row: Json) => row.instance)).toEqual(['instance-1', 'instance-2']);
    expect(owners.rows.reduce((sum: number, row: Json) => sum + row.count, 0)).toBe(participants);
  });

  it('finishes the work of an instance SIGKILLed mid-load: nothing lost, nothing answered twice', {
    timeout: 180_000,
  }, async ({ onTestFailed }) => {
    const { running, turns } = await startLoadCluster(pgUrl, 40, '1s');
    onTestFailed(() => console.error(running.describe()));
    const { instances } = running;
    const victim = instances[2] as Instance;
    const survivors = instances.slice(0, 2);

    const participants = 30;
    const perParticipant = 6;
    await enrollGreeted(running, participants);

    let killed = false;
    const killAfter = Math.floor((participants * perParticipant) / 3);
    const killer = waitFor('a third of the turns', () => turns.length >= killAfter, 120_000).then(() => {
      victim.process.child.kill('SIGKILL');
      killed = true;
    });

    await Promise.all(
      Array.from({ length: participants }, async (_, participant) => {
        for (let message = 0; message < perParticipant; message += 1) {
          const payload = {
            from: phoneOf(participant),
            text: messageText(participant, message),
            id: `gw-${participant}-${message}`,
          };
          // Like a gateway: an instance that does not answer gets the same message (same id) sent elsewhere.
          let target = (participant + message) % instances.length;
          for (let attempt = 0; ; attempt += 1) {
            const instance = instances[target] as Instance;
            const sent = await running.inbound(instance, payload).catch(() => undefined);
            if (sent?.status === 202) break;
            if (attempt > 5) throw new Error(`message ${payload.text} could not be sent`);
            target = (target + 1) % instances.length;
          }
        }
      }),
    );
    await killer;
    expect(killed).toBe(true);
    await victim.process.exit;

    const expected = participants * perParticipant;
    const answered = () => answeredCount(running, participants, perParticipant);
    // The dead instance's messages are taken over as soon as its advisory locks are gone (the recovery sweep); the
    // deliveries it had claimed at a survivor's next heartbeat (its liveness lock is gone) or once their lease
    // expires: the study clock is moved past it from time to time.
    const survivor = survivors[0] as Instance;
    let lastMove = Date.now();
    await waitFor(
      `${expected} replies after the SIGKILL`,
      async () => {
        if (answered() === expected) return true;
        if (Date.now() - lastMove > 2_000) {
          lastMove = Date.now();
          await running.api(survivor, 'POST', '/admin/clock', { advance_ms: 11 * 60_000 });
        }
        return false;
      },
      150_000,
      survivors.map((instance) => instance.process),
      100,
    );

    // Nothing doubled: each message has one reply id (a takeover may repeat a delivery, with the same id).
    const byText = deliveriesByText(running);
    for (const [participant, message] of loadMessages(participants, perParticipant)) {
      expect(byText.get(replyTo(messageText(participant, message)))?.ids.size).toBe(1);
    }
    // Nothing lost: every message processed; each participant's transcript holds each message once, in order.
    await waitFor('every inbound message processed', async () => {
      const rows = await running.db.query(
        `select count(*)::int as count from inbound_messages where status <> 'processed'`,
      );
      return rows.rows[0].count === 0;
    });
    const transcript = await running.db.query(
      `select participant_id, content from transcript where role = 'user' order by id`,
    );
    const said = new Map<string, string[]>();
    for (const row of transcript.rows as { participant_id: string; content: string }[]) {
      said.set(row.participant_id, [...(said.get(row.participant_id) ?? []), row.content]);
    }
    expect(said.size).toBe(participants);
    for (const contents of said.values()) {
      const participant = Number(/^p(\d+)-/.exec(contents[0] ?? '')?.[1]);
      expect(contents).toEqual(
        Array.from({ length: perParticipant }, (_, message) => messageText(participant, message)),
      );
    }
    // (Turn overlap is not checked here: the dead instance's last LLM request is answered after it died.)
  });
});
