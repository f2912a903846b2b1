import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../src/domain/data-keys.ts';
import { createProfile, serializeProfile } from '../../src/domain/profile.ts';
import type { ToolResult } from '../../src/engine/tool.ts';
import { createEngineHarness, type EngineHarness, systemText } from '../support/engine-harness.ts';

let harness: EngineHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function call(
  h: EngineHarness,
  args: Record<string, unknown>,
  module: 'INTAKE' | 'FEEDBACK' = 'INTAKE',
): Promise<ToolResult> {
  return h.registry.execute(
    { id: 'call_1', name: 'generate_habit_prompt', arguments: JSON.stringify(args) },
    { participantId: h.participant.id, module, sourceMessageId: undefined },
    ['generate_habit_prompt'],
  );
}

async function saveProfile(h: EngineHarness, fields: Partial<ReturnType<typeof createProfile>>) {
  await h.setData({ [DataKey.userProfile]: serializeProfile({ ...createProfile(h.clock.now()), ...fields }) });
}

describe('specification, scenario 2: missing profile repair', () => {
  it('refuses to generate without prompt_anchor and preferred_time, naming both', async () => {
    harness = await createEngineHarness();
    await saveProfile(harness, { habit_domain: 'movement' });
    const result = await call(harness, { delivery_mode: 'scheduled' }, 'FEEDBACK');
    expect(result.status).toBe('error');
    expect(result['missing_fields']).toEqual(['prompt_anchor', 'preferred_time']);
    expect(result.message).toContain('prompt_anchor and preferred_time');
    expect(harness.llm.requests).toHaveLength(0);
  });

  it('names only the missing one', async () => {
    harness = await createEngineHarness();
    await saveProfile(harness, { prompt_anchor: 'after lunch' });
    const result = await call(harness, {});
    expect(result['missing_fields']).toEqual(['preferred_time']);
  });
});

describe('specification, scenario 3: prompt generation', () => {
  it('generates from profile, background, successes, barrier, tweak and tone; stores lastHabitPrompt', async () => {
    harness = await createEngineHarness({ script: [{ content: '  After lunch, walk around the block.  ' }] });
    await saveProfile(harness, {
      prompt_anchor: 'after lunch',
      preferred_time: '12:30',
      habit_domain: 'movement',
      motivational_frame: 'to feel less sluggish',
      success_count: 3,
      total_prompts: 5,
      last_barrier: 'meetings ran late',
      last_tweak: 'shorter walk',
      tone: { tone_tags: ['concise'], tone_scores: { concise: 0.9 }, tone_version: 1 },
    });
    const result = await call(harness, { delivery_mode: 'immediate', personalization_notes: 'mention sunshine' });
    expect(result).toMatchObject({ status: 'success', prompt: 'After lunch, walk around the block.' });
    expect(result['warnings']).toBeUndefined();
    expect((await harness.data())[DataKey.lastHabitPrompt]).toBe('After lunch, walk around the block.');
    const request = harness.llm.requests[0];
    expect(request?.purpose).toBe('prompt-generator');
    expect(request?.tools).toBeUndefined();
    const system = systemText(request ?? { messages: [] });
    expect(system).toContain(harness.prompts.promptGenerator);
    for (const expected of [
      'after lunch',
      '12:30',
      'to feel less sluggish',
      'Successes so far: 3 of 5',
      'meetings ran late',
      'shorter walk',
      'mention sunshine',
      'Background: Night-shift nurse',
      '<TONE POLICY>',
    ]) {
      expect(system).toContain(expected);
    }
  });

  it('warns when habit domain and motivation are missing', async () => {
    harness = await createEngineHarness({ script: [{ content: 'After lunch, stretch.' }] });
    await saveProfile(harness, { prompt_anchor: 'after lunch', preferred_time: '12:30' });
    const result = await call(harness, {});
    expect(result.status).toBe('success');
    expect(result['warnings']).toHaveLength(2);
  });

  it('runs the immediate-prompt hook only for immediate delivery', async () => {
    const immediate: string[] = [];
    harness = await createEngineHarness({
      script: [{ content: 'p1' }, { content: 'p2' }],
      hooks: {
        async onImmediatePrompt(event) {
          immediate.push(event.participantId);
        },
      },
    });
    await saveProfile(harness, { prompt_anchor: 'after lunch', preferred_time: '12:30' });
    await call(harness, { delivery_mode: 'scheduled' });
    expect(immediate).toEqual([]);
    await call(harness, { delivery_mode: 'immediate' });
    expect(immediate).toEqual([harness.participant.id]);
  });
});
