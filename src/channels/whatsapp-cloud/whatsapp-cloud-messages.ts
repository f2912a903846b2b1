/**
 * The request bodies of `POST {API_URL}/{PHONE_NUMBER_ID}/messages`: text, interactive reply buttons (up to 3
 * options, titles of at most 20 characters), an interactive list (up to 10 rows, titles of at most 24 characters,
 * the full option in the row description when cut), and a template with the text as its body parameter.
 */
import type { OutboundMessage } from '../channel.ts';
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

export function templateBody(to: string, name: string, language: string, text: string): Record<string, unknown> {
  return {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: recipient(to),
    type: 'template',
    template: {
      name,
      language: { code: language },
      components: [{ type: 'body', parameters: [{ type: 'text', text: shorten(text, BODY_LIMIT) }] }],
    },
  };
}
