/**
 * What a message outside the 24-hour window becomes as ONE template message: which template (by kind and language)
 * and the text of its one body variable.
 *
 * - A poll keeps its options: the template of its kind whose quick-reply buttons are the options (the Done poll, the
 *   intensity poll with all three options), else the `text` template with the options numbered in the text, numbered
 *   as on SMS (a poll right after another continues its numbers), so a bare number answers it.
 * - A message with follow-ups (a daily prompt and its polls) is one text: the prompt, then each poll. Buttons only
 *   where the message ends with its only poll; two polls are numbered.
 * - The variable is one line: WhatsApp refuses a parameter with a newline, a tab or more than four consecutive
 *   spaces (error 132018; 63013 through Twilio), so every run of white space becomes one space.
 */

import { type TemplateCatalogue, TemplateKind, templateFor } from '../../domain/message-templates.ts';
import { DONE_POLL_KEYS, FixedPollKind, fixedPollOf, INTENSITY_POLL_KEYS } from '../../i18n/fixed-polls.ts';
import type { MessageCatalogue } from '../../i18n/message-catalogue.ts';
import type { OutboundMessage, OutboundPoll } from '../channel.ts';
import { renderPollAsText } from '../poll-text.ts';

/**
 * The longest body variable sent: a template's whole body is at most 1,024 characters (Meta; Twilio's 63021), and the
 * approved template's own words take part of them.
 */
export const TEMPLATE_PARAMETER_LIMIT = 900;

export interface TemplatePlan<T> {
  kind: TemplateKind;
  template: T;
  /** The body variable: one line, at most {@link TEMPLATE_PARAMETER_LIMIT} characters. */
  text: string;
  /** A quick-reply template: the poll whose options its buttons are, in order. */
  buttonsFor?: OutboundPoll;
}

/** A text as a template parameter accepts it: one line, single spaces, never empty. */
export function templateParameterText(text: string): string {
  const line = text.replace(/\s+/gu, ' ').trim();
  return line === '' ? '…' : line;
}

function shorten(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

/** Parts joined into one line as sentences: a part that does not end one gets a full stop, so none run together. */
function joinParts(parts: readonly string[]): string {
  let joined = '';
  for (const part of parts.map(templateParameterText)) {
    if (joined === '') joined = part;
    else joined += /[.!?…]$/u.test(joined) ? ` ${part}` : `. ${part}`;
  }
  return joined;
}

function partsOf(message: OutboundMessage): OutboundMessage[] {
  return [message, ...(message.followUps ?? [])];
}

function languageOf(message: OutboundMessage): string | undefined {
  return message.language ?? message.poll?.language;
}

/** The text of a message and its follow-ups in one template, polls numbered (before shortening). */
export function combinedTemplateText(message: OutboundMessage, messages?: MessageCatalogue): string {
  return joinParts(partsOf(message).map((part) => (part.poll ? renderPollAsText(part.poll, messages) : part.text)));
}

/** The quick-reply kind of a poll: one of PromptPipe's own, with all of its options (the buttons are fixed). */
function quickReplyKind(poll: OutboundPoll, messages: MessageCatalogue): TemplateKind | undefined {
  const fixed = fixedPollOf(messages, poll.question);
  if (fixed === FixedPollKind.DONE && poll.options.length === DONE_POLL_KEYS.options.length) {
    return TemplateKind.DONE_POLL;
  }
  if (fixed === FixedPollKind.INTENSITY && poll.options.length === INTENSITY_POLL_KEYS.options.length) {
    return TemplateKind.INTENSITY_POLL;
  }
  return undefined;
}

/** The template and variable for this message (with its follow-ups); undefined when no template fits. */
export function planTemplate<T>(
  message: OutboundMessage,
  catalogue: TemplateCatalogue<T>,
  messages: MessageCatalogue,
): TemplatePlan<T> | undefined {
  const parts = partsOf(message);
  const last = parts.at(-1);
  const pollCount = parts.filter((part) => part.poll).length;
  if (pollCount === 1 && last?.poll) {
    const kind = quickReplyKind(last.poll, messages);
    const template = kind ? templateFor(catalogue, kind, languageOf(message) ?? last.poll.language) : undefined;
    if (kind && template !== undefined) {
      const before = parts.slice(0, -1).map((part) => part.text);
      const text = joinParts([...before, last.poll.question]);
      return { kind, template, text: shorten(text, TEMPLATE_PARAMETER_LIMIT), buttonsFor: last.poll };
    }
  }
  const template = templateFor(catalogue, TemplateKind.TEXT, languageOf(message));
  if (template === undefined) return undefined;
  const text = shorten(combinedTemplateText(message, messages), TEMPLATE_PARAMETER_LIMIT);
  return { kind: TemplateKind.TEXT, template, text };
}

/** Whether a message and its follow-ups fit in one template's variable without being cut. */
export function fitsOneTemplate(message: OutboundMessage, messages?: MessageCatalogue): boolean {
  return combinedTemplateText(message, messages).length <= TEMPLATE_PARAMETER_LIMIT;
}
