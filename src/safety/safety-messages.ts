/**
 * The safety message a participant receives at once when a message of theirs is flagged: fixed text, never the
 * model's. The defaults name US resources; a study outside the US MUST replace them with its own
 * (`SAFETY_MESSAGES_FILE`), reviewed by its clinicians. A language without a message gets the English one.
 */
export const DEFAULT_SAFETY_MESSAGES: Readonly<Record<string, string>> = {
  en:
    'It sounds like you may be going through something very hard. I am an automated coach and cannot help in a ' +
    'crisis. If you are in danger or thinking about harming yourself, call your local emergency number now (911 in ' +
    'the US), or call or text the 988 Suicide & Crisis Lifeline (988 in the US). A member of the study team has been ' +
    'told and will contact you.',
  es:
    'Parece que estás pasando por algo muy difícil. Soy un asistente automático y no puedo ayudar en una crisis. Si ' +
    'estás en peligro o piensas en hacerte daño, llama ahora al número de emergencias de tu país (911 en EE. UU.), o ' +
    'llama o escribe a la Línea 988 de Prevención del Suicidio y Crisis (988 en EE. UU., opción 2 para español). Un ' +
    'miembro del equipo del estudio ya ha sido avisado y se pondrá en contacto contigo.',
};

/** The message for a language: exact tag, then its primary subtag (`pt-BR` → `pt`), then English. */
export function safetyMessageFor(messages: Readonly<Record<string, string>>, language: string): string {
  const primary = language.split('-')[0] ?? language;
  return messages[language] ?? messages[primary] ?? messages['en'] ?? DEFAULT_SAFETY_MESSAGES['en'] ?? '';
}
