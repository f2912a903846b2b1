import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from '../../src/domain/errors.ts';
import { defineTool } from '../../src/engine/tool.ts';
import { FALLBACK_TEXT, MAX_TOOL_ROUNDS } from '../../src/engine/tool-loop.ts';
import type { ChatRequest } from '../../src/llm/llm.ts';
import { TOOL_PROTOCOLS } from '../../src/llm/text-tool-protocol.ts';
import { createSqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import type { Store } from '../../src/store/store.ts';
import { createEngineHarness, type EngineHarness, toolResultsOf } from '../support/engine-harness.ts';

let harness: EngineHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const toolMessages = toolResultsOf;

/** The same scenarios run with native tool calling and with the `<tool_call>` text protocol. */
describe.each(TOOL_PROTOCOLS)('LLM_TOOL_PROTOCOL=%s', (toolProtocol) => {
  /** A request in text mode carries neither a tools field nor tool-role messages nor structured tool calls. */
  function expectProtocolShape(request: ChatRequest | undefined) {
    if (toolProtocol !== 'text') return;
    expect(request?.tools).toBeUndefined();
    for (const message of request?.messages ?? []) {
      expect(message.role).not.toBe('tool');
      expect('toolCalls' in message && message.toolCalls).toBeFalsy();
    }
  }

  describe('tool loop (specification §Tool loop)', () => {
    it('stops after 10 rounds of tool calls with a fallback', async () => {
      harness = await createEngineHarness({
        toolProtocol,
        script: () => ({ toolCalls: [{ name: 'save_user_profile', arguments: { additional_info: 'x' } }] }),
      });
      const result = await harness.send('hi');
      expect(harness.llm.requests).toHaveLength(MAX_TOOL_ROUNDS);
      expect(result.reply).toBe(FALLBACK_TEXT.roundsExhausted);
    });

    it('falls back when the model returns neither content nor tool calls', async () => {
      harness = await createEngineHarness({ toolProtocol, script: [{ content: '   ' }] });
      expect((await harness.send('hi')).reply).toBe(FALLBACK_TEXT.emptyResponse);
    });

    it('answers with the explicit "assistant unavailable" fallback when the model call fails', async () => {
      harness = await createEngineHarness({ toolProtocol, script: [{ error: new AppError('llm_error', 'boom') }] });
      const result = await harness.send('hi');
      expect(result.reply).toBe(FALLBACK_TEXT.llmUnavailable);
      expect(harness.messenger.textsFor(harness.participant.id)).toEqual([FALLBACK_TEXT.llmUnavailable]);
    });

    it('returns an error result listing the available tools for an unknown tool', async () => {
      harness = await createEngineHarness({
        toolProtocol,
        script: [{ toolCalls: [{ name: 'book_flight', arguments: {} }] }, { content: 'Sorry about that.' }],
      });
      await harness.send('hi');
      const [result] = toolMessages(harness.llm.requests[1]);
      expect(result.status).toBe('error');
      expect(result.message).toContain('book_flight');
      expect(result.available_tools).toEqual(['save_user_profile', 'generate_habit_prompt', 'transition_state']);
    });

    it('rejects invalid arguments field by field and saves nothing', async () => {
      harness = await createEngineHarness({
        toolProtocol,
        script: [
          { toolCalls: [{ name: 'save_user_profile', arguments: { habit_domain: 42, tone_confidence: 7 } }] },
          { content: 'Which habit?' },
        ],
      });
      await harness.send('hi');
      const [result] = toolMessages(harness.llm.requests[1]);
      expect(result.status).toBe('error');
      expect(result.invalid_fields.map((problem: { field: string }) => problem.field).sort()).toEqual([
        'habit_domain',
        'tone_confidence',
      ]);
      expect((await harness.profile()).habit_domain).toBe('');
    });

    it('reports malformed JSON arguments as an error result', async () => {
      harness = await createEngineHarness({
        toolProtocol,
        script: [{ toolCalls: [{ name: 'save_user_profile', arguments: '{"habit_domain": ' }] }, { content: 'ok' }],
      });
      await harness.send('hi');
      expect(toolMessages(harness.llm.requests[1])[0].message).toContain('not valid JSON');
    });

    it('executes every call of a multi-intent response in order, then returns content given with the calls', async () => {
      harness = await createEngineHarness({
        toolProtocol,
        script: [
          {
            content: 'Saved both!',
            toolCalls: [
              { name: 'save_user_profile', arguments: { habit_domain: 'sleep' } },
              { name: 'save_user_profile', arguments: { prompt_anchor: 'after brushing teeth' } },
            ],
          },
        ],
      });
      const result = await harness.send('sleep, after brushing my teeth');
      expect(result.reply).toBe('Saved both!');
      expect(harness.llm.requests).toHaveLength(1);
      const profile = await harness.profile();
      expect(profile.habit_domain).toBe('sleep');
      expect(profile.prompt_anchor).toBe('after brushing teeth');
      const transcript = await harness.store.transcript.list(harness.participant.id);
      expect(transcript.map((entry) => entry.kind)).toEqual(['message', 'tool_call', 'tool_result', 'tool_result']);
    });

    it('sends tool call ids and arguments back to the model byte-exact, each followed by its result', async () => {
      const rawArguments = '{ "habit_domain" : "walking",\n "additional_info": "ünïcode ✓" }';
      harness = await createEngineHarness({
        toolProtocol,
        script: [
          { toolCalls: [{ id: 'call_xyz', name: 'save_user_profile', arguments: rawArguments }] },
          { content: 'ok' },
        ],
      });
      await harness.send('hi');
      const request = harness.llm.requests[1];
      expectProtocolShape(request);
      const messages = request?.messages ?? [];
      const [stored] = (await harness.store.transcript.list(harness.participant.id)).filter(
        (entry) => entry.kind === 'tool_call',
      );
      if (toolProtocol === 'native') {
        const assistantIndex = messages.findIndex((message) => message.role === 'assistant' && 'toolCalls' in message);
        const assistant = messages[assistantIndex];
        expect(assistant && 'toolCalls' in assistant ? assistant.toolCalls : undefined).toEqual([
          { id: 'call_xyz', name: 'save_user_profile', arguments: rawArguments },
        ]);
        expect(messages[assistantIndex + 1]).toMatchObject({ role: 'tool', toolCallId: 'call_xyz' });
        expect(stored?.toolCalls).toEqual([{ id: 'call_xyz', name: 'save_user_profile', arguments: rawArguments }]);
      } else {
        // The loop names the call; the arguments are the JSON the model wrote; the result follows as user text.
        expect(stored?.toolCalls).toHaveLength(1);
        const call = stored?.toolCalls?.[0];
        expect(call).toMatchObject({ id: 'call_1_1', name: 'save_user_profile' });
        expect(JSON.parse(call?.arguments ?? '')).toEqual(JSON.parse(rawArguments));
        const assistantIndex = messages.findIndex(
          (message) => message.role === 'assistant' && message.content.includes('<tool_call>'),
        );
        expect(
          JSON.parse(/<tool_call>([\s\S]*)<\/tool_call>/.exec(messages[assistantIndex]?.content ?? '')?.[1] ?? ''),
        ).toEqual({
          name: 'save_user_profile',
          arguments: JSON.parse(rawArguments),
        });
        expect(messages[assistantIndex + 1]?.role).toBe('user');
        expect(messages[assistantIndex + 1]?.content).toMatch(
          /^<tool_result name="save_user_profile" id="call_1_1">\{"status":"success"/,
        );
      }
      const [result] = (await harness.store.transcript.list(harness.participant.id)).filter(
        (entry) => entry.kind === 'tool_result',
      );
      expect(result?.toolCallId).toBe(stored?.toolCalls?.[0]?.id);
    });
  });

  describe('specification, scenario 10: failures degrade, they do not break the turn', () => {
    it('turns a throwing tool into an error result the model sees, and the loop continues', async () => {
      const flaky = defineTool({
        name: 'scheduler',
        description: 'fails',
        schema: z.object({ action: z.string() }),
        async execute() {
          throw new Error('database is locked');
        },
      });
      harness = await createEngineHarness({
        toolProtocol,
        extraTools: [flaky],
        script: [
          { toolCalls: [{ name: 'scheduler', arguments: { action: 'create' } }] },
          { content: 'I could not set the schedule just now; I will try again.' },
        ],
      });
      const result = await harness.send('schedule me');
      expect(result.reply).toContain('could not set the schedule');
      const [toolResult] = toolMessages(harness.llm.requests[1]);
      expect(toolResult).toMatchObject({ status: 'error' });
      expect(toolResult.message).toContain('database is locked');
    });

    it('still returns and sends the reply when saving the history fails', async () => {
      const real = await createSqliteStore({ filename: ':memory:' });
      let failWrites = false;
      const store: Store = {
        ...real,
        participants: real.participants,
        flowStates: real.flowStates,
        transcript: real.transcript,
        events: real.events,
        jobs: real.jobs,
        inbound: real.inbound,
        dialect: real.dialect,
        ping: () => real.ping(),
        close: () => real.close(),
        transaction: (fn) => {
          if (failWrites) return Promise.reject(new Error('disk full'));
          return real.transaction(fn);
        },
      };
      harness = await createEngineHarness({
        toolProtocol,
        store,
        script: [
          () => {
            failWrites = true;
            return { content: 'Here is my answer.' };
          },
        ],
      });
      const result = await harness.send('hello');
      expect(result.reply).toBe('Here is my answer.');
      expect(harness.messenger.textsFor(harness.participant.id)).toEqual(['Here is my answer.']);
    });
  });
});
