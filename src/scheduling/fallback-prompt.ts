/** The plain prompt the daily prompt sends when the habit-prompt generator fails, in the participant's language. */
import type { UserProfile } from '../domain/profile.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';

/** Lower case without accents, so "Después" and "despues" compare equal. */
function foldForMatching(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
}

/**
 * Whether the anchor already says when, relative to its cue ("after my coffee", "before bed", "when I get home",
 * "después del café"): it starts with one of the language's lead words (`dailyPrompt.anchorLeadWords`, `|`-separated,
 * compared without case or accents). Such an anchor is used as it is; any other ("my morning coffee") is a cue the
 * sentence places the step after.
 */
export function anchorSaysWhen(anchor: string, leadWords: string): boolean {
  const folded = foldForMatching(anchor);
  return leadWords
    .split('|')
    .map((word) => foldForMatching(word.trim()))
    .some((word) => word !== '' && folded.startsWith(word) && /^($|[\s,.;:!?])/u.test(folded.slice(word.length)));
}

/**
 * What goes out when the generator fails: plain, built from the anchor when there is one, in the participant's
 * language (English by default), and grammatical whether the anchor is a cue ("breakfast") or already says when
 * ("after breakfast").
 */
export function fallbackPrompt(
  profile: Pick<UserProfile, 'prompt_anchor' | 'habit_domain'>,
  language?: string,
  messages: MessageCatalogue = createBuiltInMessageCatalogue(),
): string {
  const domain = profile.habit_domain.trim();
  const habit = domain
    ? messages.t(language, 'dailyPrompt.fallbackNamedHabit', { domain })
    : messages.t(language, 'dailyPrompt.fallbackHabit');
  const anchor = profile.prompt_anchor.trim().replace(/[\s.,;:!]+$/u, '');
  if (!anchor) return messages.t(language, 'dailyPrompt.fallback', { habit });
  if (!anchorSaysWhen(anchor, messages.t(language, 'dailyPrompt.anchorLeadWords'))) {
    return messages.t(language, 'dailyPrompt.fallbackWithAnchor', { habit, anchor });
  }
  // It continues the sentence after a colon: "After lunch" reads "after lunch" there.
  const continued = anchor.charAt(0).toLocaleLowerCase() + anchor.slice(1);
  return messages.t(language, 'dailyPrompt.fallbackWithTimedAnchor', { habit, anchor: continued });
}
