/**
 * Applies pseudonymisation to every answer for staff without `identify`: JSON bodies before serialisation
 * (`pseudonymiseResponse`), and HTML pages (the dashboard) as text: phone numbers masked, and every enrolled
 * participant's name replaced, wherever an answer put it (a profile field, a transcript line (a heading, a roster row, a select option). Matching the names
 * themselves rather than trusting each page renderer means a page added later cannot show one by forgetting.
 *
 * The names are read from the store at most every `NAMES_TTL_MS`, and again after any request of this instance that
 * may have changed one (an enrolment, an edit); another instance's enrolment is seen within the TTL.
 */
import type { FastifyInstance } from 'fastify';
import { can } from './actor.ts';
import { maskPhonesIn, pseudonymiseResponse } from './pseudonymise.ts';

const NAMES_TTL_MS = 5_000;
export const HIDDEN_NAME = '(name hidden)';

/** The dashboard's escaping (web/html.ts): a name appears on a page in this form. */
function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function registerPseudonymisation(
  app: FastifyInstance,
  options: { participantNames?: () => Promise<readonly string[]> } = {},
): void {
  let names: { pattern: RegExp | undefined; readAt: number } | undefined;

  async function namePattern(): Promise<RegExp | undefined> {
    if (!options.participantNames) return undefined;
    if (names && Date.now() - names.readAt < NAMES_TTL_MS) return names.pattern;
    const forms = new Set<string>();
    for (const name of await options.participantNames()) {
      const trimmed = name.trim();
      if (trimmed.length < 2) continue;
      forms.add(trimmed);
      forms.add(escapeHtml(trimmed));
    }
    // Longest first, so that "Ada Lovelace" is hidden whole rather than leaving "Lovelace".
    const alternatives = [...forms].sort((a, b) => b.length - a.length).map(escapeRegExp);
    const pattern = alternatives.length > 0 ? new RegExp(alternatives.join('|'), 'g') : undefined;
    names = { pattern, readAt: Date.now() };
    return pattern;
  }

  app.addHook('onResponse', async (request) => {
    if (!['GET', 'HEAD', 'OPTIONS'].includes(request.method)) names = undefined;
  });
  app.addHook('preSerialization', async (request, _reply, payload) => {
    if (!request.staffActor || can(request.staffActor, 'identify')) return payload;
    const pattern = await namePattern();
    return pseudonymiseResponse(payload, (text) => (pattern ? text.replace(pattern, HIDDEN_NAME) : text));
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.staffActor || can(request.staffActor, 'identify') || typeof payload !== 'string') return payload;
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.startsWith('text/html')) return payload;
    const pattern = await namePattern();
    const masked = maskPhonesIn(payload);
    return pattern ? masked.replace(pattern, HIDDEN_NAME) : masked;
  });
}
