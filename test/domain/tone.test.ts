import { describe, expect, it } from 'vitest';
import { emptyTone, type ProfileTone } from '../../src/domain/profile.ts';
import {
  ALL_TONE_TAGS,
  buildToneGuide,
  DEFAULT_STANCE_RULE,
  MUTUALLY_EXCLUSIVE_TONE_PAIRS,
  TONE_SAFETY_RULE,
  TONE_TAGS_BY_CATEGORY,
  updateProfileTone,
  validateToneProposal,
} from '../../src/domain/tone.ts';

const BASE = new Date('2026-03-01T12:00:00.000Z');
const minutesAfterBase = (minutes: number) => new Date(BASE.getTime() + minutes * 60_000);

function toneWith(overrides: Partial<ProfileTone>): ProfileTone {
  return { ...emptyTone(), ...overrides };
}

describe('whitelist', () => {
  it('has exactly the 15 tags of specification §Tone in three categories', () => {
    expect(ALL_TONE_TAGS).toHaveLength(15);
    expect(new Set(ALL_TONE_TAGS).size).toBe(15);
    expect(TONE_TAGS_BY_CATEGORY.style).toHaveLength(8);
    expect(TONE_TAGS_BY_CATEGORY.stance).toEqual([
      'warm_supportive',
      'neutral_professional',
      'direct_coach',
      'gentle_coach',
    ]);
    expect(TONE_TAGS_BY_CATEGORY.interaction).toEqual(['confirm_before_acting', 'default_actionable', 'high_autonomy']);
    expect(MUTUALLY_EXCLUSIVE_TONE_PAIRS).toEqual([
      ['concise', 'detailed'],
      ['formal', 'casual'],
      ['direct_coach', 'gentle_coach'],
    ]);
  });
});

describe('validateToneProposal', () => {
  it('lowercases, trims, strips unknown tags and dedupes', () => {
    const validated = validateToneProposal({
      tags: ['  Concise ', 'SARCASTIC', 'concise', 'warm_supportive', 'warm_supportive ', ''],
      source: 'implicit',
    });
    expect(validated.tags).toEqual(['concise', 'warm_supportive']);
  });

  it('clamps scores to [0, 1] and keeps only whitelisted, finite scores', () => {
    const validated = validateToneProposal({
      tags: [],
      scores: { ' FORMAL': 1.7, casual: -0.2, detailed: 0.55, hostile: 0.9, concise: Number.NaN },
      source: 'explicit',
      confidence: 3,
    });
    expect(validated.scores).toEqual({ formal: 1, casual: 0, detailed: 0.55 });
    expect(validated.confidence).toBe(1);
    expect(validated.source).toBe('explicit');
  });
});

describe('updateProfileTone — specification, scenario 12', () => {
  const existing = toneWith({
    tone_tags: ['concise'],
    tone_scores: { concise: 0.8 },
    tone_version: 3,
    tone_last_updated_at: BASE.toISOString(),
    tone_update_source: 'implicit',
  });
  const proposal = { tags: ['concise', 'warm_supportive'], source: 'implicit', confidence: 0.9 } as const;

  it('rejects an implicit update 2 minutes after the last update and leaves the tone unchanged', () => {
    const snapshot = structuredClone(existing);
    const result = updateProfileTone(existing, proposal, minutesAfterBase(2));
    expect(result.applied).toBe(false);
    expect(result.reason).toBe('rate_limited');
    expect(result.tone).toEqual(snapshot);
    expect(existing).toEqual(snapshot);
  });

  it('applies the EMA 4 minutes after the last update', () => {
    const snapshot = structuredClone(existing);
    const result = updateProfileTone(existing, proposal, minutesAfterBase(4));
    expect(result.applied).toBe(true);
    expect(result.tone.tone_scores).toEqual({ concise: 0.83, warm_supportive: 0.15 });
    expect(result.tone.tone_tags).toEqual(['concise']);
    expect(result.tone.tone_version).toBe(4);
    expect(result.tone.tone_last_updated_at).toBe('2026-03-01T12:04:00.000Z');
    expect(result.tone.tone_update_source).toBe('implicit');
    expect(existing).toEqual(snapshot);
  });

  it('accepts an implicit update at exactly 3 minutes', () => {
    expect(updateProfileTone(existing, proposal, minutesAfterBase(3)).applied).toBe(true);
  });

  it('applies an explicit update immediately, with the proposed values and no EMA, confidence not weighting', () => {
    const result = updateProfileTone(
      existing,
      { tags: ['warm_supportive'], scores: { concise: 0.5 }, source: 'explicit', confidence: 0.2 },
      minutesAfterBase(1),
    );
    expect(result.applied).toBe(true);
    expect(result.tone.tone_scores).toEqual({ concise: 0.5, warm_supportive: 1 });
    // concise 0.5 sits between the thresholds, so it stays active (hysteresis).
    expect(result.tone.tone_tags).toEqual(['concise', 'warm_supportive']);
    expect(result.tone.tone_update_source).toBe('explicit');
    expect(result.tone.tone_last_updated_at).toBe('2026-03-01T12:01:00.000Z');
  });
});

describe('updateProfileTone — smoothing and hysteresis', () => {
  it('decays every scored tag that was not observed', () => {
    const tone = toneWith({ tone_scores: { formal: 0.6, bullet_points: 0.2 } });
    const result = updateProfileTone(tone, { tags: ['concise'], source: 'implicit' }, BASE);
    expect(result.tone.tone_scores).toEqual({ concise: 0.15, formal: 0.51, bullet_points: 0.17 });
  });

  it('uses a proposed score as the observation of an implicit update', () => {
    const tone = toneWith({ tone_scores: { formal: 0.6 } });
    const result = updateProfileTone(tone, { tags: [], scores: { formal: 0 }, source: 'implicit' }, BASE);
    expect(result.tone.tone_scores).toEqual({ formal: 0.51 });
  });

  it('keeps an active tag active between the thresholds and deactivates it at 0.4', () => {
    const active = toneWith({ tone_tags: ['formal'], tone_scores: { formal: 0.75 } });
    const stillActive = updateProfileTone(active, { tags: ['casual'], source: 'implicit' }, BASE);
    expect(stillActive.tone.tone_scores['formal']).toBe(0.6375);
    expect(stillActive.tone.tone_tags).toEqual(['formal']);

    const atThreshold = toneWith({ tone_tags: ['formal'], tone_scores: { formal: 0.4 } });
    const deactivated = updateProfileTone(
      atThreshold,
      { tags: ['formal'], scores: { formal: 0.4 }, source: 'explicit' },
      BASE,
    );
    expect(deactivated.tone.tone_tags).toEqual([]);
  });

  it('keeps an inactive tag inactive between the thresholds and activates it at 0.7', () => {
    const inactive = toneWith({ tone_scores: { casual: 0.6 } });
    const stillInactive = updateProfileTone(inactive, { tags: ['casual'], source: 'implicit' }, BASE);
    expect(stillInactive.tone.tone_scores['casual']).toBe(0.66);
    expect(stillInactive.tone.tone_tags).toEqual([]);

    const activated = updateProfileTone(
      stillInactive.tone,
      { tags: ['casual'], scores: { casual: 0.7 }, source: 'explicit' },
      BASE,
    );
    expect(activated.tone.tone_tags).toEqual(['casual']);
  });

  it('lets repeated implicit observations activate a tag', () => {
    let tone = emptyTone();
    let updates = 0;
    for (let minutes = 0; !tone.tone_tags.includes('bullet_points'); minutes += 3) {
      tone = updateProfileTone(tone, { tags: ['bullet_points'], source: 'implicit' }, minutesAfterBase(minutes)).tone;
      updates += 1;
    }
    // Scores are rounded after every step: 0.15, 0.2775, 0.3859, 0.478, 0.5563, 0.6229, 0.6795, 0.7276.
    expect(updates).toBe(8);
    expect(tone.tone_scores['bullet_points']).toBe(0.7276);
    expect(tone.tone_version).toBe(8);
  });

  it('rejects a proposal with no valid tags without touching the tone', () => {
    const tone = toneWith({ tone_scores: { formal: 0.9 }, tone_tags: ['formal'] });
    const result = updateProfileTone(tone, { tags: ['snarky'], source: 'explicit' }, BASE);
    expect(result).toEqual({ tone, applied: false, reason: 'empty_proposal' });
  });

  it('does not count an update that changes nothing', () => {
    const tone = toneWith({ tone_tags: ['formal'], tone_scores: { formal: 1 }, tone_version: 2 });
    const result = updateProfileTone(tone, { tags: ['formal'], source: 'explicit' }, BASE);
    expect(result.applied).toBe(false);
    expect(result.reason).toBe('unchanged');
    expect(result.tone.tone_version).toBe(2);
  });

  it('drops stored scores and tags outside the whitelist and carries tone_override_until over', () => {
    const tone = toneWith({
      tone_tags: ['sarcastic', 'formal'],
      tone_scores: { sarcastic: 0.9, formal: 0.9 },
      tone_override_until: '2026-04-01T00:00:00.000Z',
    });
    const result = updateProfileTone(tone, { tags: ['formal'], source: 'explicit' }, BASE);
    expect(result.tone.tone_scores).toEqual({ formal: 1 });
    expect(result.tone.tone_tags).toEqual(['formal']);
    expect(result.tone.tone_override_until).toBe('2026-04-01T00:00:00.000Z');
  });
});

describe('updateProfileTone — overrides', () => {
  it('no_emojis overrides emojis_ok, even when both are proposed', () => {
    const result = updateProfileTone(emptyTone(), { tags: ['emojis_ok', 'no_emojis'], source: 'explicit' }, BASE);
    expect(result.tone.tone_tags).toEqual(['no_emojis']);
    expect(result.tone.tone_scores).toEqual({ no_emojis: 1, emojis_ok: 0 });
  });

  it('an active no_emojis held by hysteresis still suppresses emojis_ok', () => {
    const tone = toneWith({ tone_tags: ['no_emojis'], tone_scores: { no_emojis: 0.6 } });
    const result = updateProfileTone(tone, { tags: ['emojis_ok'], source: 'explicit' }, BASE);
    expect(result.tone.tone_tags).toEqual(['no_emojis']);
    expect(result.tone.tone_scores).toEqual({ no_emojis: 0.6, emojis_ok: 0 });
  });

  it('emojis_ok activates once no_emojis is lowered', () => {
    const tone = toneWith({ tone_tags: ['no_emojis'], tone_scores: { no_emojis: 1 } });
    const result = updateProfileTone(tone, { tags: ['emojis_ok'], scores: { no_emojis: 0 }, source: 'explicit' }, BASE);
    expect(result.tone.tone_tags).toEqual(['emojis_ok']);
  });

  it.each(MUTUALLY_EXCLUSIVE_TONE_PAIRS)('keeps the higher of %s / %s and sets the lower to 0.39', (first, second) => {
    const firstHigher = updateProfileTone(
      emptyTone(),
      { tags: [], scores: { [first]: 0.9, [second]: 0.8 }, source: 'explicit' },
      BASE,
    );
    expect(firstHigher.tone.tone_scores).toEqual({ [first]: 0.9, [second]: 0.39 });
    expect(firstHigher.tone.tone_tags).toEqual([first]);

    const secondHigher = updateProfileTone(
      emptyTone(),
      { tags: [], scores: { [first]: 0.75, [second]: 0.95 }, source: 'explicit' },
      BASE,
    );
    expect(secondHigher.tone.tone_scores).toEqual({ [first]: 0.39, [second]: 0.95 });
    expect(secondHigher.tone.tone_tags).toEqual([second]);
  });

  it('on a tie keeps the tag just observed, else the first of the pair', () => {
    const stored = toneWith({ tone_tags: ['direct_coach'], tone_scores: { direct_coach: 0.8 } });
    const observedSecond = updateProfileTone(
      stored,
      { tags: [], scores: { gentle_coach: 0.8 }, source: 'explicit' },
      BASE,
    );
    expect(observedSecond.tone.tone_scores).toEqual({ direct_coach: 0.39, gentle_coach: 0.8 });
    expect(observedSecond.tone.tone_tags).toEqual(['gentle_coach']);

    const bothObserved = updateProfileTone(emptyTone(), { tags: ['casual', 'formal'], source: 'explicit' }, BASE);
    expect(bothObserved.tone.tone_scores).toEqual({ formal: 1, casual: 0.39 });
    expect(bothObserved.tone.tone_tags).toEqual(['formal']);
  });

  it('enforces exclusion after implicit smoothing too', () => {
    const tone = toneWith({ tone_tags: ['concise'], tone_scores: { concise: 0.95, detailed: 0.9 } });
    const result = updateProfileTone(tone, { tags: ['concise', 'detailed'], source: 'implicit' }, BASE);
    expect(result.tone.tone_scores).toEqual({ concise: 0.9575, detailed: 0.39 });
    expect(result.tone.tone_tags).toEqual(['concise']);
  });
});

describe('buildToneGuide', () => {
  it('is empty when no tag is active', () => {
    expect(buildToneGuide(emptyTone())).toBe('');
    expect(buildToneGuide(toneWith({ tone_tags: ['sarcastic'], tone_scores: { concise: 0.9 } }))).toBe('');
  });

  it('writes one rule per active tag grouped by category, the default stance and the safety rule', () => {
    const guide = buildToneGuide(toneWith({ tone_tags: ['high_autonomy', 'concise', 'no_emojis', 'emojis_ok'] }));
    const lines = guide.split('\n');
    expect(lines[0]).toBe('<TONE POLICY>');
    expect(lines.at(-1)).toBe('</TONE POLICY>');
    expect(lines.at(-2)).toBe(`- ${TONE_SAFETY_RULE}`);
    expect(lines).toContain(`- ${DEFAULT_STANCE_RULE}`);
    expect(guide).toContain('Do not use emojis.');
    expect(guide).not.toContain('Emojis are welcome');
    const style = lines.indexOf('Style:');
    const stance = lines.indexOf('Stance:');
    const interaction = lines.indexOf('Interaction:');
    expect(style).toBeGreaterThan(0);
    expect(stance).toBeGreaterThan(style);
    expect(interaction).toBeGreaterThan(stance);
    expect(lines.slice(style + 1, stance)).toHaveLength(2);
    expect(lines.slice(interaction + 1, interaction + 2)[0]).toMatch(/^- .*confirmation/);
  });

  it('omits the default stance when a stance tag is active', () => {
    const guide = buildToneGuide(toneWith({ tone_tags: ['warm_supportive'] }));
    expect(guide).not.toContain(DEFAULT_STANCE_RULE);
    expect(guide).toContain('warm and supportive');
    expect(guide).toContain(TONE_SAFETY_RULE);
    expect(guide).not.toContain('Style:');
  });

  it('states neutral_professional once when it is the active stance', () => {
    const guide = buildToneGuide(toneWith({ tone_tags: ['neutral_professional'] }));
    expect(guide.split(DEFAULT_STANCE_RULE)).toHaveLength(2);
  });

  it('has a distinct rule for every tag', () => {
    const rules = ALL_TONE_TAGS.map((tag) => buildToneGuide(toneWith({ tone_tags: [tag] })));
    expect(new Set(rules).size).toBe(ALL_TONE_TAGS.length);
  });
});
