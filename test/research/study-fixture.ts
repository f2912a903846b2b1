/**
 * A generated three-day study on the wired application (real engine, timers, job runner, OpenAI-compatible adapter
 * against the scripted model server; no webhook URL, so messages are recorded, not sent) with the manual clock.
 *
 * Ada (America/New_York, prompt 09:00 local): day 1 answers "Done" and "Increase" to the intensity poll and gives
 * feedback (barrier "rain", tweak "walk indoors"); day 2 answers "Next time"; day 3 does not answer (reminder sent).
 * Ben (Europe/London) is enrolled and greeted but never answers the intake: no daily prompts.
 */
import type { Application } from '../../src/main.ts';
import {
  type ScriptedChatRequest,
  type ScriptedOpenAiServer,
  type ScriptedReply,
  startScriptedOpenAiServer,
} from '../support/scripted-openai-server.ts';
import { startTestApplication } from '../support/test-application.ts';
import { waitUntil } from '../support/wait-until.ts';

export const ADA_PHONE = '+15551230001';
export const BEN_PHONE = '+447700900123';
export const PROMPT_TEXT = 'After breakfast, put on your shoes and walk for five minutes.';

function coach(request: ScriptedChatRequest): ScriptedReply {
  const system = request.body.messages[0]?.content ?? '';
  const last = request.lastMessage;
  if (system.startsWith('You write one short daily habit prompt')) return { content: PROMPT_TEXT };
  if (system.includes('(FEEDBACK)')) {
    if (last?.role === 'user' && last.content?.includes('Done')) {
      return {
        toolCalls: [{ name: 'save_user_profile', arguments: { last_barrier: 'rain', last_tweak: 'walk indoors' } }],
      };
    }
    return { content: 'Wonderful, well done! How did the walk feel?' };
  }
  if (last?.content?.includes('expecting a greeting')) return { content: 'Hi! Which habit would you like to build?' };
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

export interface Study {
  app: Application;
  model: ScriptedOpenAiServer;
  adaId: string;
  benId: string;
  close(): Promise<void>;
}

export async function startStudyApp(extraEnv: Record<string, string> = {}): Promise<{
  app: Application;
  model: ScriptedOpenAiServer;
}> {
  const model = await startScriptedOpenAiServer({ respond: coach });
  const app = await startTestApplication({ OPENAI_BASE_URL: model.baseUrl, ...extraEnv });
  return { app, model };
}

export async function generateStudy(extraEnv: Record<string, string> = {}): Promise<Study> {
  const { app, model } = await startStudyApp(extraEnv);
  const call = async (method: 'GET' | 'POST', url: string, payload?: unknown) =>
    (await app.server.inject({ method, url, ...(payload ? { payload: payload as object } : {}) })).json();
  const inbound = async (text: string, id: string, pollAnswer?: { poll_id: string; option: string }) => {
    await call('POST', '/channels/webhook/messages', {
      from: ADA_PHONE,
      text,
      id,
      ...(pollAnswer ? { poll_answer: pollAnswer } : {}),
    });
    await app.inbound.idle();
  };
  const lastPoll = async (question: string) => {
    const entries = await app.store.transcript.list(adaId);
    const poll = entries.filter((entry) => entry.kind === 'poll' && entry.content.startsWith(question)).at(-1);
    if (!poll?.outboundId) throw new Error(`no poll ${question}`);
    return poll.outboundId;
  };
  const promptsSent = async () => (await app.store.events.list({ participantId: adaId, type: 'prompt-sent' })).length;

  const adaId = (
    await call('POST', '/conversation/participants', {
      phone_number: ADA_PHONE,
      name: 'Ada',
      timezone: 'America/New_York',
    })
  ).result.id as string;
  const benId = (
    await call('POST', '/conversation/participants', {
      phone_number: BEN_PHONE,
      name: 'Ben',
      timezone: 'Europe/London',
    })
  ).result.id as string;
  await inbound('Walking, after breakfast, around 9', 'm1');

  // Day 1: Done, intensity up, feedback.
  await call('POST', '/admin/clock', { set_to: '2026-03-03T14:00:00Z' });
  await waitUntil('day 1 prompt', async () => (await promptsSent()) === 1);
  await call('POST', '/admin/clock', { set_to: '2026-03-03T14:10:00Z' });
  await inbound('', 'm2', { poll_id: await lastPoll('Did you do it?'), option: 'Done' });
  await call('POST', '/admin/clock', { set_to: '2026-03-03T14:12:00Z' });
  await inbound('', 'm3', { poll_id: await lastPoll("How's the intensity?"), option: 'Increase' });

  // Day 2: Next time.
  await call('POST', '/admin/clock', { set_to: '2026-03-04T14:00:00Z' });
  await waitUntil('day 2 prompt', async () => (await promptsSent()) === 2);
  await call('POST', '/admin/clock', { set_to: '2026-03-04T14:30:00Z' });
  await inbound('', 'm4', { poll_id: await lastPoll('Did you do it?'), option: 'Next time' });

  // Day 3: no answer; the reminder goes out 5 hours later.
  await call('POST', '/admin/clock', { set_to: '2026-03-05T14:00:00Z' });
  await waitUntil('day 3 prompt', async () => (await promptsSent()) === 3);
  await call('POST', '/admin/clock', { set_to: '2026-03-05T19:30:00Z' });
  await app.runner.runDue();

  return {
    app,
    model,
    adaId,
    benId,
    async close() {
      await app.stop();
      await model.close();
    },
  };
}
