/**
 * The request bodies of `POST {API_URL}/{PHONE_NUMBER_ID}/messages`: text, interactive reply buttons (up to 3
 * options, titles of at most 20 characters), an interactive list (up to 10 rows, titles of at most 24 characters,
 * the full option in the row description when cut), and a template (outside-window/template-text.ts) with its body
 * variable and, for a poll's quick-reply template, the buttons' payloads.
 */
import type { WhatsAppTemplate } from '../../config/channels.ts';
import type { OutboundMessage } from '../channel.ts';
import type { TemplatePlan } from '../outside-window/template-text.ts';
import { pollReplyId } from './whatsapp-cloud-payload.ts';

export const BUTTON_TITLE_LIMIT = 20;
export const LIST_ROW_TITLE_LIMIT = 24;
const LIST_ROW_LIMIT = 10;
const BODY_LIMIT = 1024;

function shorten(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}

/** WhatsApp wants the number without `+`. */
function recipient(to: string): string {
  return to.replace(/^\+/, '');
}

export function textBody(to: string, text: string): Record<string, unknown> {
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: recipient(to),
    type: 'text',
    text: { preview_url: false, body: text },
  };
}

export function pollBody(message: OutboundMessage): Record<string, unknown> {
  const poll = message.poll;
  if (!poll) return textBody(message.to, message.text);
  const bodyText = shorten(poll.question || message.text, BODY_LIMIT);
  const interactive =
    poll.options.length <= 3
      ? {
          type: 'button',
          body: { text: bodyText },
          action: {
            buttons: poll.options.map((option, index) => ({
              type: 'reply',
              reply: { id: pollReplyId(poll.id, index), title: shorten(option, BUTTON_TITLE_LIMIT) },
            })),
          },
        }
      : {
          type: 'list',
          body: { text: bodyText },
          action: {
            button: 'Choose',
            sections: [
              {
                title: 'Options',
                rows: poll.options.slice(0, LIST_ROW_LIMIT).map((option, index) => ({
                  id: pollReplyId(poll.id, index),
                  title: shorten(option, LIST_ROW_TITLE_LIMIT),
                  ...(option.length > LIST_ROW_TITLE_LIMIT ? { description: shorten(option, 72) } : {}),
                })),
              },
            ],
          },
        };
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: recipient(message.to),
    type: 'interactive',
    interactive,
  };
}

/** An approved template of the WhatsApp Business Account, as configured (config/channels.ts). */
export type { WhatsAppTemplate };

/**
 * A template message: the body variable, and for a quick-reply template one `button` component per option whose
 * payload names the poll and the option (`<pollId>:<index>`), like an interactive reply's id.
 */
export function templateBody(to: string, plan: TemplatePlan<WhatsAppTemplate>): Record<string, unknown> {
  const poll = plan.buttonsFor;
  const buttons = poll
    ? poll.options.map((_option, index) => ({
        type: 'button',
        sub_type: 'quick_reply',
        index: String(index),
        parameters: [{ type: 'payload', payload: pollReplyId(poll.id, index) }],
      }))
    : [];
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: recipient(to),
    type: 'template',
    template: {
      name: plan.template.name,
      language: { code: plan.template.language },
      components: [{ type: 'body', parameters: [{ type: 'text', text: plan.text }] }, ...buttons],
    },
  };
}
