/**
 * Tone adaptation (specification §Tone): a fixed whitelist of tone tags, validation of the model's proposals, EMA
 * smoothing with hysteresis, mutual exclusion, and the `<TONE POLICY>` block injected into prompts. Everything here is
 * pure.
 */
import type { ProfileTone, ToneUpdateSource } from './profile.ts';

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
function roundScore(value: number): number {
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

export type ToneUpdateRejection = 'rate_limited' | 'empty_proposal' | 'unchanged';

export interface ToneUpdateResult {
  tone: ProfileTone;
  applied: boolean;
  reason?: ToneUpdateRejection;
}

/**
 * The observed value per tag: 1.0 for a proposed tag, or the proposal's explicit score for that tag. A score given
 * for a tag not listed in `tags` still counts as an observation.
 */
function observations(proposal: ValidatedToneProposal): Map<ToneTag, number> {
  const observed = new Map<ToneTag, number>();
  for (const tag of proposal.tags) observed.set(tag, 1);
  for (const tag of ALL_TONE_TAGS) {
    const score = proposal.scores[tag];
    if (score !== undefined) observed.set(tag, score);
  }
  return observed;
}

function isRateLimited(tone: ProfileTone, now: Date): boolean {
  if (tone.tone_last_updated_at === undefined) return false;
  const lastUpdated = Date.parse(tone.tone_last_updated_at);
  if (Number.isNaN(lastUpdated)) return false;
  // A last update in the future (clock skew) also counts as "too recent".
  return now.getTime() - lastUpdated < MIN_IMPLICIT_TONE_INTERVAL_MS;
}

function currentScores(tone: ProfileTone): Map<ToneTag, number> {
  const scores = new Map<ToneTag, number>();
  for (const tag of ALL_TONE_TAGS) {
    const score = tone.tone_scores[tag];
    if (typeof score === 'number' && Number.isFinite(score)) scores.set(tag, roundScore(score));
  }
  return scores;
}

/** Explicit: proposed values replace the old ones outright; tags not proposed keep their scores. */
function applyExplicit(scores: Map<ToneTag, number>, observed: Map<ToneTag, number>): void {
  for (const [tag, value] of observed) scores.set(tag, roundScore(value));
}

/** Implicit: EMA towards the observation for observed tags; every other scored tag decays towards 0. */
function applyImplicit(scores: Map<ToneTag, number>, observed: Map<ToneTag, number>): void {
  const keep = 1 - TONE_SMOOTHING_ALPHA;
  for (const [tag, old] of scores) {
    if (!observed.has(tag)) scores.set(tag, roundScore(keep * old));
  }
  for (const [tag, value] of observed) {
    scores.set(tag, roundScore(keep * (scores.get(tag) ?? 0) + TONE_SMOOTHING_ALPHA * value));
  }
}

/**
 * If both tags of a pair reach the activation threshold, the higher score wins and the other drops to 0.39.
 * On a tie, the tag observed in this proposal wins if only one of the two was observed; otherwise the first tag of
 * the pair wins.
 */
function enforceMutualExclusion(scores: Map<ToneTag, number>, observed: Map<ToneTag, number>): void {
  for (const [first, second] of MUTUALLY_EXCLUSIVE_TONE_PAIRS) {
    const firstScore = scores.get(first) ?? 0;
    const secondScore = scores.get(second) ?? 0;
    if (firstScore < TONE_ACTIVATION_THRESHOLD || secondScore < TONE_ACTIVATION_THRESHOLD) continue;
    const secondWinsTie = observed.has(second) && !observed.has(first);
    const secondWins = secondScore > firstScore || (secondScore === firstScore && secondWinsTie);
    scores.set(secondWins ? first : second, TONE_EXCLUSION_DEMOTED_SCORE);
  }
}

function isActiveAfterUpdate(score: number, wasActive: boolean): boolean {
  if (score >= TONE_ACTIVATION_THRESHOLD) return true;
  if (score <= TONE_DEACTIVATION_THRESHOLD) return false;
  return wasActive;
}

function sameTone(before: ProfileTone, scores: Map<ToneTag, number>, tags: readonly ToneTag[]): boolean {
  const beforeTags = new Set(before.tone_tags);
  if (beforeTags.size !== tags.length || tags.some((tag) => !beforeTags.has(tag))) return false;
  const beforeKeys = Object.keys(before.tone_scores);
  if (beforeKeys.length !== scores.size) return false;
  return beforeKeys.every((tag) => isToneTag(tag) && scores.get(tag) === before.tone_scores[tag]);
}

function scoresInWhitelistOrder(scores: Map<ToneTag, number>): Record<string, number> {
  const ordered: Record<string, number> = {};
  for (const tag of ALL_TONE_TAGS) {
    const score = scores.get(tag);
    if (score !== undefined) ordered[tag] = score;
  }
  return ordered;
}

function copyTone(tone: ProfileTone): ProfileTone {
  return { ...tone, tone_tags: [...tone.tone_tags], tone_scores: { ...tone.tone_scores } };
}

/**
 * Smoothing and activation (specification §Tone): applies a tone proposal to a profile's tone. Pure: returns a new tone
 * and never mutates `tone`.
 *
 * - The proposal is validated first ({@link validateToneProposal}); a proposal with nothing left is not applied.
 * - Implicit updates are rejected (`rate_limited`, tone unchanged) within 3 minutes of `tone_last_updated_at`,
 *   whatever the source of that last update. Explicit updates always apply.
 * - Scores: see {@link applyExplicit} / {@link applyImplicit}; rounded to 4 decimals, clamped to [0, 1].
 * - `no_emojis` overrides `emojis_ok`: whenever `no_emojis` is active after the update, `emojis_ok` is set to 0
 *   and is inactive, even if it was proposed in the same update.
 * - Mutual exclusion, then activation with hysteresis (≥ 0.7 on, ≤ 0.4 off, in between unchanged).
 * - Scores and tags outside the whitelist are dropped; `tone_tags` is in whitelist order.
 * - An update that changes no score and no tag is not applied (`unchanged`), so versions count real changes.
 * - On success: `tone_version` + 1, `tone_last_updated_at` = `now` (RFC 3339), `tone_update_source` = source.
 *   `tone_override_until` is carried over untouched.
 */
export function updateProfileTone(tone: ProfileTone, proposal: ToneProposal, now: Date): ToneUpdateResult {
  const validated = validateToneProposal(proposal);
  const observed = observations(validated);
  if (observed.size === 0) return { tone: copyTone(tone), applied: false, reason: 'empty_proposal' };
  if (validated.source === 'implicit' && isRateLimited(tone, now)) {
    return { tone: copyTone(tone), applied: false, reason: 'rate_limited' };
  }

  const scores = currentScores(tone);
  if (validated.source === 'explicit') applyExplicit(scores, observed);
  else applyImplicit(scores, observed);
  enforceMutualExclusion(scores, observed);

  const wasActive = new Set(tone.tone_tags);
  const noEmojisActive = isActiveAfterUpdate(scores.get('no_emojis') ?? 0, wasActive.has('no_emojis'));
  if (noEmojisActive && scores.has('emojis_ok')) scores.set('emojis_ok', 0);
  const tags = ALL_TONE_TAGS.filter((tag) => isActiveAfterUpdate(scores.get(tag) ?? 0, wasActive.has(tag)));

  if (sameTone(tone, scores, tags)) return { tone: copyTone(tone), applied: false, reason: 'unchanged' };

  const updated: ProfileTone = {
    ...tone,
    tone_tags: tags,
    tone_scores: scoresInWhitelistOrder(scores),
    tone_version: tone.tone_version + 1,
    tone_last_updated_at: now.toISOString(),
    tone_update_source: validated.source,
  };
  return { tone: updated, applied: true };
}

const TONE_RULES: Readonly<Record<ToneTag, string>> = {
  concise: 'Be concise: short sentences, no filler.',
  detailed: 'Give a little more explanation and context, without rambling.',
  formal: 'Use a formal, professional register.',
  casual: 'Use casual, friendly everyday language.',
  no_emojis: 'Do not use emojis.',
  emojis_ok: 'Emojis are welcome where they fit.',
  bullet_points: 'Use bullet points when listing several items.',
  one_question_at_a_time: 'Ask at most one question per message.',
  warm_supportive: 'Be warm and supportive; acknowledge effort and encourage.',
  neutral_professional: 'Keep a neutral, professional stance.',
  direct_coach: 'Coach directly: clear, action-oriented feedback.',
  gentle_coach: 'Coach gently: patient, encouraging guidance.',
  confirm_before_acting: 'Confirm with the participant before taking any action on their behalf.',
  default_actionable: 'End with a concrete next step by default.',
  high_autonomy: 'Act on clear requests without asking for confirmation.',
};

const CATEGORY_HEADINGS: Readonly<Record<ToneCategory, string>> = {
  style: 'Style:',
  stance: 'Stance:',
  interaction: 'Interaction:',
};

/** The safety line every tone guide ends with. */
export const TONE_SAFETY_RULE = 'NEVER mirror hostility, sarcasm, insults, or unsafe language.';
/** The stance used when no stance tag is active. */
export const DEFAULT_STANCE_RULE = 'Keep a neutral, professional stance.';

/**
 * The guide (specification §Tone): the `<TONE POLICY>` block for the active tags, one rule per tag grouped by category,
 * or '' when no whitelisted tag is active. When no stance tag is active the default neutral stance is stated;
 * `emojis_ok` is never stated next to `no_emojis`; the safety rule is always last.
 */
export function buildToneGuide(tone: ProfileTone): string {
  const active = new Set(tone.tone_tags.filter(isToneTag));
  if (active.size === 0) return '';
  if (active.has('no_emojis')) active.delete('emojis_ok');

  const lines = ['<TONE POLICY>', "Adapt your replies to this participant's preferred communication style."];
  for (const category of Object.keys(TONE_TAGS_BY_CATEGORY) as ToneCategory[]) {
    const rules = TONE_TAGS_BY_CATEGORY[category].filter((tag) => active.has(tag)).map((tag) => TONE_RULES[tag]);
    if (category === 'stance' && rules.length === 0) rules.push(DEFAULT_STANCE_RULE);
    if (rules.length === 0) continue;
    lines.push(CATEGORY_HEADINGS[category], ...rules.map((rule) => `- ${rule}`));
  }
  lines.push('Always:', `- ${TONE_SAFETY_RULE}`, '</TONE POLICY>');
  return lines.join('\n');
}
