/** The tone whitelist, its thresholds, and the validation of the model's proposals. Pure. */
import type { ToneUpdateSource } from './profile.ts';

/** The whitelist, by category. Only these tags are ever stored or shown to the model. */
export const TONE_TAGS_BY_CATEGORY = {
  style: [
    'concise',
    'detailed',
    'formal',
    'casual',
    'no_emojis',
    'emojis_ok',
    'bullet_points',
    'one_question_at_a_time',
  ],
  stance: ['warm_supportive', 'neutral_professional', 'direct_coach', 'gentle_coach'],
  interaction: ['confirm_before_acting', 'default_actionable', 'high_autonomy'],
} as const;

export type ToneCategory = keyof typeof TONE_TAGS_BY_CATEGORY;
export type ToneTag = (typeof TONE_TAGS_BY_CATEGORY)[ToneCategory][number];

/** All 15 tags in category order; this order is also the order of `tone_tags` after an update. */
export const ALL_TONE_TAGS: readonly ToneTag[] = [
  ...TONE_TAGS_BY_CATEGORY.style,
  ...TONE_TAGS_BY_CATEGORY.stance,
  ...TONE_TAGS_BY_CATEGORY.interaction,
];

/** At most one tag of each pair may be active. */
export const MUTUALLY_EXCLUSIVE_TONE_PAIRS: readonly (readonly [ToneTag, ToneTag])[] = [
  ['concise', 'detailed'],
  ['formal', 'casual'],
  ['direct_coach', 'gentle_coach'],
];

/** EMA weight of a new observation. */
export const TONE_SMOOTHING_ALPHA = 0.15;
/** A score at or above this activates its tag. */
export const TONE_ACTIVATION_THRESHOLD = 0.7;
/** A score at or below this deactivates its tag; in between, the tag keeps its state (hysteresis). */
export const TONE_DEACTIVATION_THRESHOLD = 0.4;
/** The losing tag of an exclusive pair drops just under the deactivation threshold. */
export const TONE_EXCLUSION_DEMOTED_SCORE = 0.39;
/** Implicit updates are accepted at most once per this interval since `tone_last_updated_at`. */
export const MIN_IMPLICIT_TONE_INTERVAL_MS = 3 * 60 * 1000;

const TONE_TAG_SET: ReadonlySet<string> = new Set(ALL_TONE_TAGS);

export function isToneTag(value: string): value is ToneTag {
  return TONE_TAG_SET.has(value);
}

/** What the model proposes through `save_user_profile`, before validation. */
export interface ToneProposal {
  tags: readonly string[];
  scores?: Readonly<Record<string, number>>;
  source: ToneUpdateSource;
  /** The model's self-reported confidence; kept for logs, never used to weight scores. */
  confidence?: number;
}

/** A proposal after {@link validateToneProposal}: only whitelisted tags, scores within [0, 1]. */
export interface ValidatedToneProposal {
  tags: ToneTag[];
  scores: Partial<Record<ToneTag, number>>;
  source: ToneUpdateSource;
  confidence?: number;
}

function normaliseTagName(name: string): string {
  return name.trim().toLowerCase();
}

function clampUnit(value: number): number {
  return Math.min(1, Math.max(0, value));
}

/** Four decimals keep stored scores readable (0.83, not 0.8300000000000001) and comparisons stable. */
export function roundScore(value: number): number {
  return Math.round(clampUnit(value) * 10_000) / 10_000;
}

/**
 * Validation (specification §Tone): lowercases and trims tag names, strips unknown tags, removes duplicates (first
 * occurrence wins), clamps scores to [0, 1] and keeps only scores of whitelisted tags. Non-finite scores and
 * confidences are dropped.
 */
export function validateToneProposal(proposal: ToneProposal): ValidatedToneProposal {
  const tags: ToneTag[] = [];
  for (const rawTag of proposal.tags) {
    const tag = normaliseTagName(rawTag);
    if (isToneTag(tag) && !tags.includes(tag)) tags.push(tag);
  }
  const scores: Partial<Record<ToneTag, number>> = {};
  for (const [rawTag, score] of Object.entries(proposal.scores ?? {})) {
    const tag = normaliseTagName(rawTag);
    if (isToneTag(tag) && typeof score === 'number' && Number.isFinite(score)) scores[tag] = clampUnit(score);
  }
  const validated: ValidatedToneProposal = { tags, scores, source: proposal.source };
  if (typeof proposal.confidence === 'number' && Number.isFinite(proposal.confidence)) {
    validated.confidence = clampUnit(proposal.confidence);
  }
  return validated;
}
