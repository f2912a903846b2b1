/**
 * The end-to-end scenario, in process: the wired application (real engine, tools, timers, job runner,
 * OpenAI-compatible adapter) against the scripted model server and a local webhook gateway, with the manual clock.
 * enroll → greeting delivered → intake turn (profile + schedule) → clock to prompt time → prompt and poll delivered
 * → "Done" poll answer → success_count 1 → a feedback turn.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { type HttpReceiver, startHttpReceiver } from '../support/http-receiver.ts';
import {
  type ScriptedChatRequest,
  type ScriptedOpenAiServer,
  type ScriptedReply,
  startScriptedOpenAiServer,
} from '../support/scripted-openai-server.ts';
import { startTestApplication } from '../support/test-application.ts';
import { waitUntil } from '../support/wait-until.ts';

const PHONE = '+15551230001';
let model: ScriptedOpenAiServer;
let gateway: HttpReceiver;
let app: Application;

/** The coach, scripted by what it is asked: which system prompt, and what came last. */
function coach(request: ScriptedChatRequest): ScriptedReply {
  const system = request.body.messages[0]?.content ?? '';
  const last = request.lastMessage;
  if (system.startsWith('You write one short daily habit prompt')) {
    return { content: 'After breakfast, put on your shoes and walk for five minutes.' };
  }
  if (system.includes('(FEEDBACK)')) return { content: 'Wonderful, well done! How did the walk feel?' };
  if (last?.content?.includes('expecting a greeting'))
    return { content: 'Hi Ada! Which habit would you like to build?' };
  if (last?.role === 'user') {
    return {
      toolCalls: [
        {
          name: 'save_user_profile',
          arguments: {
            habit_domain: 'walking',
            motivational_frame: 'more energy',
            preferred_time: '09:00',
            prompt_anchor: 'after breakfast',
          },
        },
      ],
    };
  }
  const previousCall = [...request.body.messages].reverse().find((message) => message.tool_calls)?.tool_calls?.[0];
  if (previousCall?.function.name === 'save_user_profile') {
    return { toolCalls: [{ name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '09:00' } }] };
  }
  return { content: 'All set: your prompt comes every morning before 9.' };
}

const eventually = (check: () => boolean | Promise<boolean>, what: string) => waitUntil(what, check);

const delivered = () => gateway.requests.map((request) => JSON.parse(request.body));

beforeEach(async () => {
  gateway = await startHttpReceiver();
  model = await startScriptedOpenAiServer({ respond: coach });
  app = await startTestApplication({
    OPENAI_BASE_URL: model.baseUrl,
    PROMPTPIPE_WEBHOOK_URL: gateway.url,
  });
});
afterEach(async () => {
  await app.stop();
  await model.close();
  await gateway.close();
});

describe('a participant from enrollment to the first feedback turn', () => {
  it('runs the whole study day over HTTP', async () => {
    const call = async (method: 'GET' | 'POST', url: string, payload?: unknown) =>
      (await app.server.inject({ method, url, ...(payload ? { payload: payload as object } : {}) })).json();

    const enrolled = await call('POST', '/conversation/participants', {
      phone_number: PHONE,
      name: 'Ada',
      timezone: 'America/New_York',
    });
    const id = enrolled.result.id as string;
    await eventually(() => gateway.requests.length === 1, 'the greeting');
    expect(delivered()[0].text).toBe('Hi Ada! Which habit would you like to build?');

    await call('POST', '/channels/webhook/messages', {
      from: PHONE,
      text: 'Walking, after breakfast, around 9',
      id: 'g1',
    });
    await app.inbound.idle();
    await eventually(() => gateway.requests.length === 2, 'the intake reply');
    expect(delivered()[1].text).toBe('All set: your prompt comes every morning before 9.');
    const afterIntake = (await call('GET', `/conversation/participants/${id}/state`)).result;
    expect(afterIntake.schedules).toHaveLength(1);
    expect(afterIntake.pending_jobs).toContainEqual(
      expect.objectContaining({ kind: 'daily_prompt', run_at: '2026-03-03T13:50:00.000Z' }),
    );

    const advanced = await call('POST', '/admin/clock', { set_to: '2026-03-03T14:00:00Z' });
    expect(advanced.result.now).toBe('2026-03-03T14:00:00.000Z');
    // The background job loop may have claimed a delivery the advance did not wait for: wait for all three.
    await eventually(() => gateway.requests.length >= 5, 'the prompt, the Done poll and the intensity poll');
    const [prompt, poll, intensityPoll] = delivered().slice(2);
    expect(prompt).toMatchObject({
      kind: 'text',
      text: 'After breakfast, put on your shoes and walk for five minutes.',
    });
    expect(poll).toMatchObject({ kind: 'poll', poll: { question: 'Did you do it?', options: ['Done', 'Next time'] } });
    // The first prompt day also asks about the intensity: the Done poll is no longer the last poll.
    expect(intensityPoll).toMatchObject({ kind: 'poll', poll: { question: "How's the intensity?" } });

    const sentBefore = gateway.requests.length;
    await call('POST', '/channels/webhook/messages', {
      from: PHONE,
      text: '',
      id: 'g2',
      poll_answer: { poll_id: poll.poll.id, option: 'Done' },
    });
    await app.inbound.idle();
    await eventually(
      () => delivered().some((message) => message.text === 'Wonderful, well done! How did the walk feel?'),
      'the feedback reply',
    );
    expect(gateway.requests.length).toBeGreaterThan(sentBefore);
    expect(delivered().at(-1).text).toBe('Wonderful, well done! How did the walk feel?');
    const afterFeedback = (await call('GET', `/conversation/participants/${id}/state`)).result;
    expect(afterFeedback.profile.success_count).toBe(1);
    expect(afterFeedback.conversation_state).toBe('FEEDBACK');
    const feedbackRequest = model.requests.at(-1);
    expect(feedbackRequest?.lastMessage?.content).toBe('Q: Did you do it? A: Done');
  });
});
