/** One tone update: EMA smoothing with hysteresis and mutual exclusion, explicit or implicit. Pure. */
import type { ProfileTone } from './profile.ts';
import {
  ALL_TONE_TAGS,
  isToneTag,
  MIN_IMPLICIT_TONE_INTERVAL_MS,
  MUTUALLY_EXCLUSIVE_TONE_PAIRS,
  roundScore,
  TONE_ACTIVATION_THRESHOLD,
  TONE_DEACTIVATION_THRESHOLD,
  TONE_EXCLUSION_DEMOTED_SCORE,
  TONE_SMOOTHING_ALPHA,
  type ToneProposal,
  type ToneTag,
  type ValidatedToneProposal,
  validateToneProposal,
} from './tone-tags.ts';

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
