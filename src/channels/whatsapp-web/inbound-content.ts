/**
 * What a WhatsApp message says, as text for the conversation: the text itself, a caption, or — for media PromptPipe
 * cannot read (voice notes, stickers, photos without a caption) — a bracketed note, so the message is recorded and
 * the coach answers it sensibly (asks for text) instead of it vanishing.
 */
import type { WhatsAppMessageContent } from './whatsapp-socket.ts';

/** Ephemeral, view-once and captioned-document wrappers hold the real content one level down. */
export function unwrapContent(content: WhatsAppMessageContent | null | undefined): WhatsAppMessageContent | undefined {
  let current = content ?? undefined;
  for (let depth = 0; current && depth < 4; depth += 1) {
    const inner =
      current.ephemeralMessage?.message ??
      current.viewOnceMessage?.message ??
      current.viewOnceMessageV2?.message ??
      current.documentWithCaptionMessage?.message;
    if (!inner) return current;
    current = inner;
  }
  return current;
}

export type InboundContent =
  | { kind: 'text'; text: string }
  | { kind: 'media'; text: string; media: string }
  | { kind: 'poll-vote' }
  | { kind: 'ignored'; reason: string };

function unreadable(description: string): string {
  return `[The participant sent ${description}. PromptPipe can only read text, so ask them to write it as a text message.]`;
}

export function describeContent(content: WhatsAppMessageContent | undefined): InboundContent {
  if (!content) return { kind: 'ignored', reason: 'no content' };
  if (content.pollUpdateMessage) return { kind: 'poll-vote' };
  if (content.protocolMessage) return { kind: 'ignored', reason: 'protocol message' };
  if (content.reactionMessage) return { kind: 'ignored', reason: 'reaction' };
  const text = content.conversation ?? content.extendedTextMessage?.text;
  if (text?.trim()) return { kind: 'text', text };
  const caption = content.imageMessage?.caption ?? content.videoMessage?.caption ?? content.documentMessage?.caption;
  if (caption?.trim()) return { kind: 'text', text: caption };
  if (content.imageMessage) return { kind: 'media', media: 'image', text: unreadable('a photo without text') };
  if (content.videoMessage) return { kind: 'media', media: 'video', text: unreadable('a video without text') };
  if (content.audioMessage) return { kind: 'media', media: 'audio', text: unreadable('a voice message') };
  if (content.stickerMessage) return { kind: 'media', media: 'sticker', text: unreadable('a sticker') };
  if (content.documentMessage) {
    const name = content.documentMessage.fileName ? ` (${content.documentMessage.fileName})` : '';
    return { kind: 'media', media: 'document', text: unreadable(`a document${name}`) };
  }
  if (content.locationMessage) return { kind: 'media', media: 'location', text: unreadable('a location') };
  if (content.contactMessage) return { kind: 'media', media: 'contact', text: unreadable('a contact card') };
  // Edits, pins, key distribution and the like carry nothing the participant said.
  return { kind: 'ignored', reason: `unsupported content (${Object.keys(content).join(', ')})` };
}
