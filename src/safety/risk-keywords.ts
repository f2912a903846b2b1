/**
 * The keyword detector: phrases that signal a risk to a participant (self-harm, suicide, a medical or safety
 * emergency), per language. Matching is on whole words and ignores case, accents and punctuation, so "Me quiero
 * MORIR!!" matches "me quiero morir" and "suicidal" does not match inside another word; a phrase ending in `*` matches
 * any word starting with it ("suicid*"). Every language's list is checked for every message: a participant may write
 * in another language than their own, and these phrases rarely mean anything harmless in another one.
 *
 * The defaults are a starting point for a study's safety plan, not a clinical instrument: a study reviews them with
 * its clinicians and replaces them with `SAFETY_KEYWORDS_FILE` (docs/safety.md).
 */

export type KeywordRules = Readonly<Record<string, readonly string[]>>;

export const DEFAULT_RISK_KEYWORDS: KeywordRules = {
  en: [
    'suicid*',
    'kill myself',
    'killing myself',
    'end my life',
    'ending my life',
    'take my own life',
    'want to die',
    'wanna die',
    'better off dead',
    'no reason to live',
    'dont want to live',
    'hurt myself',
    'hurting myself',
    'harm myself',
    'self harm',
    'cut myself',
    'cutting myself',
    'overdose',
    'chest pain',
    'cant breathe',
    'heart attack',
    'not safe at home',
  ],
  es: [
    'suicid*',
    'matarme',
    'quitarme la vida',
    'acabar con mi vida',
    'quiero morir',
    'quiero morirme',
    'no quiero vivir',
    'mejor muerto',
    'mejor muerta',
    'hacerme dano',
    'lastimarme',
    'cortarme',
    'sobredosis',
    'dolor en el pecho',
    'no puedo respirar',
    'no estoy a salvo en casa',
  ],
};

/** Lower case, no accents, apostrophes dropped ("don't" → "dont"), anything else not a letter or digit a space. */
export function normalizeForMatching(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/['’`´]/g, '')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export interface KeywordMatch {
  language: string;
  /** The phrase as written in the rules. */
  rule: string;
}

interface CompiledRule extends KeywordMatch {
  pattern: RegExp;
}

export interface KeywordDetector {
  match(text: string): KeywordMatch | undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Throws on an empty phrase: a blank rule would match every message. */
export function createKeywordDetector(rules: KeywordRules): KeywordDetector {
  const compiled: CompiledRule[] = [];
  for (const [language, phrases] of Object.entries(rules)) {
    for (const rule of phrases) {
      const stem = rule.endsWith('*');
      const words = normalizeForMatching(stem ? rule.slice(0, -1) : rule);
      if (!words) throw new Error(`the safety keyword "${rule}" (${language}) has no letters`);
      const body = words.split(' ').map(escapeRegExp).join(' ');
      // Spaces around the normalised text stand for the word boundaries (\b does not know accented letters).
      compiled.push({ language, rule, pattern: new RegExp(` ${body}${stem ? '' : ' '}`) });
    }
  }
  return {
    match(text) {
      const normalized = ` ${normalizeForMatching(text)} `;
      const hit = compiled.find((candidate) => candidate.pattern.test(normalized));
      return hit && { language: hit.language, rule: hit.rule };
    },
  };
}
