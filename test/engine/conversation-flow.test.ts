import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DataKey } from '../../src/domain/data-keys.ts';
import { parseHistory } from '../../src/domain/history.ts';
import { DEBUG_PREFIX } from '../../src/engine/debug-report.ts';
import { defineTool } from '../../src/engine/tool.ts';
import type { ChatRequest } from '../../src/llm/llm.ts';
import { createEngineHarness, type EngineHarness, systemText } from '../support/engine-harness.ts';

let harness: EngineHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function lastUser(request: ChatRequest | undefined): string {
  const message = request?.messages.filter((entry) => entry.role === 'user').at(-1);
  return message?.content ?? '';
}

describe('specification, scenario 1: intake completion', () => {
  it('saves the profile, generates a prompt, schedules, and moves to FEEDBACK', async () => {
    const schedulerCalls: unknown[] = [];
    const fakeScheduler = defineTool({
      name: 'scheduler',
      description: 'test double of the scheduler tool',
      schema: z.object({ action: z.string(), type: z.string().optional(), fixed_time: z.string().optional() }),
      async execute(args) {
        schedulerCalls.push(args);
        return { status: 'success', message: 'scheduled' };
      },
    });
    harness = await createEngineHarness({
      extraTools: [fakeScheduler],
      script: [
        {
          toolCalls: [
            { name: 'save_user_profile', arguments: { habit_domain: 'movement', motivational_frame: 'more energy' } },
          ],
        },
        { content: 'Great! When would you like your daily prompt, and after which routine?' },
        {
          toolCalls: [
            { name: 'save_user_profile', arguments: { preferred_time: '08:00', prompt_anchor: 'after coffee' } },
          ],
        },
        { toolCalls: [{ name: 'generate_habit_prompt', arguments: { delivery_mode: 'immediate' } }] },
        { content: 'After your coffee, take a 5-minute walk.' },
        {
          toolCalls: [
            { name: 'scheduler', arguments: { action: 'create', type: 'fixed', fixed_time: '08:00' } },
            { name: 'transition_state', arguments: { target_state: 'FEEDBACK' } },
          ],
        },
        { content: 'Here is your first prompt: after your coffee, take a 5-minute walk. See you tomorrow at 8!' },
      ],
    });
    const first = await harness.send('I want to move more because I want more energy');
    expect(first.reply).toContain('When would you like');
    expect(first.module).toBe('INTAKE');

    const second = await harness.send('8am, right after my morning coffee');
    expect(second.toolsCalled).toEqual(['save_user_profile', 'generate_habit_prompt', 'scheduler', 'transition_state']);
    const profile = await harness.profile();
    expect(profile).toMatchObject({
      habit_domain: 'movement',
      motivational_frame: 'more energy',
      preferred_time: '08:00',
      prompt_anchor: 'after coffee',
      intensity: 'normal',
    });
    const data = await harness.data();
    expect(data[DataKey.lastHabitPrompt]).toBe('After your coffee, take a 5-minute walk.');
    expect(data[DataKey.conversationState]).toBe('FEEDBACK');
    expect(schedulerCalls).toEqual([{ action: 'create', type: 'fixed', fixed_time: '08:00' }]);
    expect(harness.messenger.textsFor(harness.participant.id)).toEqual([first.reply, second.reply]);

    const events = await harness.store.events.list({ participantId: harness.participant.id, type: 'tool-called' });
    expect(events.map((event) => event.data['name'])).toEqual([
      'save_user_profile',
      'save_user_profile',
      'generate_habit_prompt',
      'scheduler',
      'transition_state',
    ]);
    expect(events.every((event) => typeof event.sourceMessageId === 'string')).toBe(true);
    const stateChanges = await harness.store.events.list({
      participantId: harness.participant.id,
      type: 'state-changed',
    });
    expect(stateChanges.at(-1)?.data).toMatchObject({ from: 'INTAKE', to: 'FEEDBACK', source: 'tool' });
  });
});

describe('specification, scenario 4: feedback path', () => {
  it('routes FEEDBACK turns to the feedback module with its tools and runs the feedback hook', async () => {
    const feedbackTurns: string[] = [];
    harness = await createEngineHarness({
      hooks: {
        async onFeedbackTurn(event) {
          feedbackTurns.push(event.participantId);
        },
      },
      script: [
        { toolCalls: [{ name: 'save_user_profile', arguments: { last_barrier: 'it rained' } }] },
        { content: 'Rain happens! Want to try an indoor option tomorrow?' },
      ],
    });
    await harness.setData({ [DataKey.conversationState]: 'FEEDBACK' });
    const result = await harness.send('I skipped it, it was raining');
    expect(result.module).toBe('FEEDBACK');
    const request = harness.llm.requests[0];
    expect(request?.tools?.map((tool) => tool.name)).toEqual(['transition_state', 'save_user_profile']);
    expect(systemText(request ?? { messages: [] })).toContain(harness.prompts.feedback);
    expect(systemText(request ?? { messages: [] })).toContain('FEEDBACK CONTEXT');
    expect((await harness.profile()).last_barrier).toBe('it rained');
    expect(feedbackTurns).toEqual([harness.participant.id]);
  });
});

describe('processResponse', () => {
  it('routes an empty or unknown sub-state to INTAKE and persists it', async () => {
    harness = await createEngineHarness({ script: [{ content: 'Hi there' }] });
    await harness.setData({ [DataKey.conversationState]: 'COORDINATOR' });
    const result = await harness.send('hello');
    expect(result.module).toBe('INTAKE');
    expect((await harness.data())[DataKey.conversationState]).toBe('INTAKE');
    expect(harness.llm.requests[0]?.tools?.map((tool) => tool.name)).toEqual([
      'save_user_profile',
      'generate_habit_prompt',
      'transition_state',
    ]);
  });

  it('counts a structured "Done" poll answer as a success and shows it to the model as Q/A text', async () => {
    harness = await createEngineHarness({ script: [{ content: 'Well done!' }] });
    await harness.send('', { pollAnswer: { question: 'Did you do it?', option: 'Done' } });
    expect((await harness.profile()).success_count).toBe(1);
    expect(lastUser(harness.llm.requests[0])).toBe('Q: Did you do it? A: Done');
  });

  it('does not count "Next time" and never counts from free text', async () => {
    harness = await createEngineHarness({ script: [{ content: 'ok' }, { content: 'ok' }] });
    await harness.send('', { pollAnswer: { question: 'Did you do it?', option: 'Next time' } });
    await harness.send('Done');
    expect((await harness.profile()).success_count).toBe(0);
  });

  it('moves intensity one step per intensity poll answer', async () => {
    harness = await createEngineHarness({ script: [{ content: 'ok' }, { content: 'ok' }, { content: 'ok' }] });
    const question = "How's the intensity?";
    await harness.send('', { pollAnswer: { question, option: 'Increase' } });
    expect((await harness.profile()).intensity).toBe('high');
    await harness.send('', { pollAnswer: { question, option: 'Increase' } });
    expect((await harness.profile()).intensity).toBe('high');
    await harness.send('', { pollAnswer: { question, option: 'Decrease' } });
    expect((await harness.profile()).intensity).toBe('normal');
  });

  it('keeps the last 50 messages in the working history and everything in the transcript', async () => {
    harness = await createEngineHarness({ script: () => ({ content: 'noted' }) });
    for (let index = 0; index < 30; index += 1) await harness.send(`message ${index}`);
    const history = parseHistory((await harness.data())[DataKey.conversationHistory]);
    expect(history.messages).toHaveLength(50);
    expect(history.messages[0]?.content).toBe('message 5');
    const transcript = await harness.store.transcript.list(harness.participant.id);
    expect(transcript.filter((entry) => entry.role === 'user')).toHaveLength(30);
  });

  it.each([
    [0, 0],
    [4, 4],
    [-1, 20],
  ])('CHAT_HISTORY_LIMIT=%i sends %i history messages', async (limit, expected) => {
    harness = await createEngineHarness({ chatHistoryLimit: limit, script: () => ({ content: 'noted' }) });
    for (let index = 0; index < 10; index += 1) await harness.send(`message ${index}`);
    await harness.send('final');
    const request = harness.llm.requests.at(-1);
    const nonSystem = request?.messages.filter((message) => message.role !== 'system') ?? [];
    // The history window plus the current message.
    expect(nonSystem.length - 1).toBe(expected);
    expect(nonSystem.at(-1)?.content).toBe('final');
  });

  it('greets from a synthetic hint that is never stored as a participant message', async () => {
    harness = await createEngineHarness({
      script: [{ content: 'Welcome, Ada! What habit would you like to build?' }, { content: 'Walking it is.' }],
    });
    const result = await harness.flow.greet(harness.participant.id);
    expect(result.reply).toContain('Welcome');
    expect(lastUser(harness.llm.requests[0])).toContain('joined the conversation');
    const transcript = await harness.store.transcript.list(harness.participant.id);
    expect(transcript.filter((entry) => entry.role === 'user')).toHaveLength(0);
    const history = parseHistory((await harness.data())[DataKey.conversationHistory]);
    expect(history.messages.map((message) => message.role)).toEqual(['assistant']);

    // The next turn still shows the model the greeting the participant is answering.
    await harness.send('walking');
    const next = harness.llm.requests[1]?.messages.filter((message) => message.role !== 'system') ?? [];
    expect(next.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(next[1]?.content).toContain('What habit would you like');
    expect(next[2]?.content).toBe('walking');
  });

  it('puts the participant background and intake status in the context', async () => {
    harness = await createEngineHarness({ script: [{ content: 'Hi' }] });
    await harness.send('hello');
    const system = systemText(harness.llm.requests[0] ?? { messages: [] });
    expect(system).toContain('Background: Night-shift nurse');
    expect(system).toContain('Still needed: habit_domain, motivational_frame, preferred_time, prompt_anchor.');
  });

  it('sends 🐛 DEBUG messages with sub-state, profile and tools in debug mode', async () => {
    harness = await createEngineHarness({
      debug: true,
      script: [
        {
          toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 'sleep' } }],
          reasoning: 'user said sleep',
        },
        { content: 'Sleep it is.' },
      ],
    });
    await harness.send('sleep better');
    const texts = harness.messenger.textsFor(harness.participant.id);
    expect(texts[0]).toBe('Sleep it is.');
    const debug = texts.filter((text) => text.startsWith(DEBUG_PREFIX));
    expect(debug[0]).toContain('state=INTAKE');
    expect(debug[0]).toContain('domain=sleep');
    expect(debug[0]).toContain('save_user_profile(success)');
    expect(debug[1]).toContain('user said sleep');
  });

  it('runs two turns for the same participant one after the other', async () => {
    let active = 0;
    let maxActive = 0;
    harness = await createEngineHarness({
      script: async () => {
        active += 1;
        maxActive = Math.max(maxActive, active);
        await new Promise((resolve) => setTimeout(resolve, 5));
        active -= 1;
        return { content: 'ok' };
      },
    });
    await Promise.all([harness.send('one'), harness.send('two'), harness.send('three')]);
    expect(maxActive).toBe(1);
    const history = parseHistory((await harness.data())[DataKey.conversationHistory]);
    expect(history.messages.map((message) => message.content)).toEqual(['one', 'ok', 'two', 'ok', 'three', 'ok']);
  });
});

describe('a turn run again after its instance died (same inbound id)', () => {
  it('resumes from the recorded message: recorded once, its poll effect applied once, answered', async () => {
    harness = await createEngineHarness({ script: [{ content: 'Well done!' }, { content: 'Well done, again!' }] });
    const message = {
      participantId: harness.participant.id,
      text: '',
      receivedAt: harness.clock.now(),
      sourceMessageId: 'in_interrupted',
      pollAnswer: { question: 'Did you do it?', option: 'Done' },
    };
    // The instance dies after the message was recorded, before the reply went out (here: the send fails).
    const send = harness.messenger.send;
    harness.messenger.send = () => Promise.reject(new Error('the process died'));
    await expect(harness.flow.handleMessage(message)).rejects.toThrow('the process died');
    harness.messenger.send = send;
    // Another instance processes the same inbound message again.
    const again = await harness.flow.handleMessage(message);
    expect(again.reply).toBe('Well done, again!');
    expect(harness.messenger.textsFor(harness.participant.id)).toEqual(['Well done, again!']);
    expect((await harness.profile()).success_count).toBe(1);
    const transcript = await harness.store.transcript.list(harness.participant.id);
    expect(transcript.filter((entry) => entry.role === 'user')).toHaveLength(1);
    // The model saw the participant's answer once, as the last message, not twice.
    const userMessages = harness.llm.requests[1]?.messages.filter((entry) => entry.role === 'user') ?? [];
    expect(userMessages.filter((entry) => entry.content === lastUser(harness?.llm.requests[0]))).toHaveLength(1);
    expect(lastUser(harness.llm.requests[1])).toBe(lastUser(harness.llm.requests[0]));
  });
  it('trusts the caller that says whether the message is recorded, and does not look it up again', async () => {
    harness = await createEngineHarness({ script: [{ content: 'First.' }, { content: 'Second.' }] });
    const { store } = harness;
    const lookups: string[] = [];
    const lookUp = store.transcript.forSourceMessage.bind(store.transcript);
    store.transcript.forSourceMessage = (participantId, sourceMessageId) => {
      lookups.push(sourceMessageId);
      return lookUp(participantId, sourceMessageId);
    };
    const message = {
      participantId: harness.participant.id,
      text: 'I walked today',
      receivedAt: harness.clock.now(),
      sourceMessageId: 'in_told',
    };
    await harness.flow.handleMessage({ ...message, recorded: false });
    // Told it is recorded (the inbound service found it so): resumed, not recorded a second time.
    await harness.flow.handleMessage({ ...message, recorded: true });
    expect(lookups).toEqual([]);
    const transcript = await harness.store.transcript.list(harness.participant.id);
    expect(transcript.filter((entry) => entry.role === 'user').map((entry) => entry.content)).toEqual([
      'I walked today',
    ]);
    // Without the hint the flow looks the message up itself.
    await harness.flow.handleMessage(message);
    expect(lookups).toEqual(['in_told']);
  });
});
