/**
 * The participant's structured profile, stored as JSON under the `userProfile` data key (its fields: specification
 * §Tools; its tone: specification §Tone). Field names are the stored JSON names, so the type is also the storage
 * format.
 */
export const Intensity = { LOW: 'low', NORMAL: 'normal', HIGH: 'high' } as const;
export type Intensity = (typeof Intensity)[keyof typeof Intensity];
const INTENSITY_ORDER: readonly Intensity[] = [Intensity.LOW, Intensity.NORMAL, Intensity.HIGH];

export type ToneUpdateSource = 'explicit' | 'implicit';

/** Tone adaptation state (specification §Tone). Timestamps are RFC 3339 strings. */
export interface ProfileTone {
  tone_tags: string[];
  tone_scores: Record<string, number>;
  tone_version: number;
  tone_last_updated_at?: string;
  tone_update_source?: ToneUpdateSource;
  tone_override_until?: string;
}

export interface UserProfile {
  habit_domain: string;
  motivational_frame: string;
  preferred_time: string;
  prompt_anchor: string;
  additional_info: string;
  intensity: Intensity;
  last_successful_prompt: string;
  last_barrier: string;
  last_tweak: string;
  last_motivator: string;
  success_count: number;
  total_prompts: number;
  created_at: string;
  updated_at: string;
  tone: ProfileTone;
}

/** The text fields `save_user_profile` may merge. */
export const PROFILE_TEXT_FIELDS = [
  'habit_domain',
  'motivational_frame',
  'preferred_time',
  'prompt_anchor',
  'additional_info',
  'last_successful_prompt',
  'last_barrier',
  'last_tweak',
  'last_motivator',
] as const satisfies readonly (keyof UserProfile)[];
export type ProfileTextField = (typeof PROFILE_TEXT_FIELDS)[number];

export function emptyTone(): ProfileTone {
  return { tone_tags: [], tone_scores: {}, tone_version: 0 };
}

/** `GetOrCreateUserProfile`: a new profile has intensity "normal". */
export function createProfile(now: Date): UserProfile {
  const timestamp = now.toISOString();
  return {
    habit_domain: '',
    motivational_frame: '',
    preferred_time: '',
    prompt_anchor: '',
    additional_info: '',
    intensity: Intensity.NORMAL,
    last_successful_prompt: '',
    last_barrier: '',
    last_tweak: '',
    last_motivator: '',
    success_count: 0,
    total_prompts: 0,
    created_at: timestamp,
    updated_at: timestamp,
    tone: emptyTone(),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;
}

export function isIntensity(value: unknown): value is Intensity {
  return value === Intensity.LOW || value === Intensity.NORMAL || value === Intensity.HIGH;
}

function parseTone(value: unknown): ProfileTone {
  if (!isRecord(value)) return emptyTone();
  const tone = emptyTone();
  if (Array.isArray(value['tone_tags'])) tone.tone_tags = value['tone_tags'].filter((tag) => typeof tag === 'string');
  if (isRecord(value['tone_scores'])) {
    for (const [tag, score] of Object.entries(value['tone_scores'])) {
      if (typeof score === 'number' && Number.isFinite(score)) tone.tone_scores[tag] = score;
    }
  }
  tone.tone_version = count(value['tone_version']);
  if (typeof value['tone_last_updated_at'] === 'string') tone.tone_last_updated_at = value['tone_last_updated_at'];
  if (value['tone_update_source'] === 'explicit' || value['tone_update_source'] === 'implicit') {
    tone.tone_update_source = value['tone_update_source'];
  }
  if (typeof value['tone_override_until'] === 'string') tone.tone_override_until = value['tone_override_until'];
  return tone;
}

/**
 * Reads a stored profile leniently: a missing or corrupt value yields a fresh profile, unknown fields are dropped,
 * and wrong types fall back to defaults, so a bad stored value never breaks a turn.
 */
export function parseProfile(raw: string | undefined, now: Date): UserProfile {
  const profile = createProfile(now);
  if (!raw) return profile;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return profile;
  }
  if (!isRecord(value)) return profile;
  for (const field of PROFILE_TEXT_FIELDS) profile[field] = text(value[field]);
  if (isIntensity(value['intensity'])) profile.intensity = value['intensity'];
  profile.success_count = count(value['success_count']);
  profile.total_prompts = count(value['total_prompts']);
  if (typeof value['created_at'] === 'string') profile.created_at = value['created_at'];
  if (typeof value['updated_at'] === 'string') profile.updated_at = value['updated_at'];
  profile.tone = parseTone(value['tone']);
  return profile;
}

export function serializeProfile(profile: UserProfile): string {
  return JSON.stringify(profile);
}

/** One step along low ↔ normal ↔ high; stays put at either end. */
export function stepIntensity(current: Intensity, direction: 'decrease' | 'increase'): Intensity {
  const index = INTENSITY_ORDER.indexOf(current);
  const next = direction === 'increase' ? Math.min(index + 1, INTENSITY_ORDER.length - 1) : Math.max(index - 1, 0);
  return INTENSITY_ORDER[next] ?? Intensity.NORMAL;
}
