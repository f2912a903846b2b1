import { afterEach, describe, expect, it } from 'vitest';
import { DataKey } from '../../src/domain/data-keys.ts';
import { createProfile, serializeProfile } from '../../src/domain/profile.ts';
import type { ToolResult } from '../../src/engine/tool.ts';
import { createEngineHarness, type EngineHarness } from '../support/engine-harness.ts';

let harness: EngineHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function call(h: EngineHarness, args: Record<string, unknown>): Promise<ToolResult> {
  return h.registry.execute(
    { id: 'call_1', name: 'save_user_profile', arguments: JSON.stringify(args) },
    { participantId: h.participant.id, module: 'INTAKE', sourceMessageId: undefined },
    ['save_user_profile'],
  );
}

describe('save_user_profile (specification §Tools)', () => {
  it('merges only non-empty, different fields and reports which changed', async () => {
    harness = await createEngineHarness();
    const first = await call(harness, { habit_domain: 'sleep', preferred_time: '22:00' });
    expect(first.status).toBe('success');
    expect(first['updated_fields']).toEqual(['habit_domain', 'preferred_time']);
    const second = await call(harness, { habit_domain: 'sleep', preferred_time: '', prompt_anchor: '  ' });
    expect(second.status).toBe('noop');
    const profile = await harness.profile();
    expect(profile.preferred_time).toBe('22:00');
    expect(profile.prompt_anchor).toBe('');
    expect(profile.intensity).toBe('normal');
  });

  it('maps the legacy last_blocker to last_barrier', async () => {
    harness = await createEngineHarness();
    await call(harness, { last_blocker: 'too tired' });
    expect((await harness.profile()).last_barrier).toBe('too tired');
  });

  it('returns a profile snapshot with the result', async () => {
    harness = await createEngineHarness();
    const result = await call(harness, { motivational_frame: 'for my kids' });
    expect((result['profile'] as { motivational_frame: string }).motivational_frame).toBe('for my kids');
  });

  it('validates tone tags against the whitelist before applying them', async () => {
    harness = await createEngineHarness();
    const result = await call(harness, { tone_tags: [' CONCISE ', 'sarcastic'], tone_update_source: 'explicit' });
    expect(result.status).toBe('success');
    const tone = (await harness.profile()).tone;
    expect(tone.tone_scores).toEqual({ concise: 1 });
    expect(tone.tone_tags).toEqual(['concise']);
  });
});

describe('specification, scenario 12: tone update through save_user_profile', () => {
  it('rejects an implicit update within 3 minutes, applies EMA after, and applies explicit at once', async () => {
    harness = await createEngineHarness();
    const profile = createProfile(harness.clock.now());
    profile.tone = {
      tone_tags: ['concise'],
      tone_scores: { concise: 0.8 },
      tone_version: 1,
      tone_last_updated_at: new Date(harness.clock.now().getTime() - 2 * 60_000).toISOString(),
      tone_update_source: 'implicit',
    };
    await harness.setData({ [DataKey.userProfile]: serializeProfile(profile) });
    const proposal = {
      tone_tags: ['concise', 'warm_supportive'],
      tone_update_source: 'implicit',
      tone_confidence: 0.9,
    };

    const rejected = await call(harness, proposal);
    expect(rejected.status).toBe('noop');
    expect(rejected.message).toContain('rate_limited');
    expect((await harness.profile()).tone.tone_scores).toEqual({ concise: 0.8 });

    harness.clock.advance(2 * 60_000); // now 4 minutes after the last update
    const applied = await call(harness, proposal);
    expect(applied.status).toBe('success');
    const tone = (await harness.profile()).tone;
    expect(tone.tone_scores).toEqual({ concise: 0.83, warm_supportive: 0.15 });
    expect(tone.tone_tags).toEqual(['concise']);

    harness.clock.advance(60_000); // 1 minute later: explicit ignores the rate limit
    const explicit = await call(harness, { tone_tags: ['warm_supportive'], tone_update_source: 'explicit' });
    expect(explicit.status).toBe('success');
    const after = (await harness.profile()).tone;
    expect(after.tone_scores['warm_supportive']).toBe(1);
    expect(after.tone_tags).toContain('warm_supportive');
    expect(after.tone_update_source).toBe('explicit');
  });
});
