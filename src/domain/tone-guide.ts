/** The `<TONE POLICY>` block injected into prompts, from a participant's active tone tags. Pure. */
import type { ProfileTone } from './profile.ts';
import { isToneTag, TONE_TAGS_BY_CATEGORY, type ToneCategory, type ToneTag } from './tone-tags.ts';

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
