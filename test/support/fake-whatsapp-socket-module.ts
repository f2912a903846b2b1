/**
 * TEST ONLY: the socket module a `promptpipe` process loads with PROMPTPIPE_WHATSAPP_WEB_SOCKET_MODULE pointing here.
 * It puts the fake WhatsApp in the server process and talks to the test through files in FAKE_WHATSAPP_DIR:
 *
 * - `sent.jsonl`: one line per message sent — `{id, jid, text}` or `{id, jid, poll: {name, values, secret}}` with the
 *   poll's message secret in base64, which the test needs to encrypt a vote like the participant's phone does;
 * - `inbox/*.json`: Baileys `messages.upsert` payloads (`{messages: [...]}`) the test drops in; byte fields are
 *   written as `{"base64": "…"}`. They are emitted in file-name order and deleted.
 *
 * With FAKE_WHATSAPP_AUTO_LINK=1 every QR code is "scanned" at once (for `promptpipe whatsapp login`).
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { WhatsAppMessage, WhatsAppSocketFactory } from '../../src/channels/whatsapp-web/whatsapp-socket.ts';
import { FakeWhatsApp } from './fake-whatsapp-socket.ts';

const directory = process.env['FAKE_WHATSAPP_DIR'] ?? '';
if (!directory) throw new Error('FAKE_WHATSAPP_DIR must name the directory shared with the test');
const inbox = join(directory, 'inbox');
mkdirSync(inbox, { recursive: true });

const whatsapp: FakeWhatsApp = new FakeWhatsApp({
  onSent: (message) => {
    const content =
      'text' in message.content
        ? { text: message.content.text }
        : {
            poll: {
              name: message.content.poll.name,
              values: message.content.poll.values,
              selectableCount: message.content.poll.selectableCount,
              secret: Buffer.from(message.content.poll.messageSecret).toString('base64'),
            },
          };
    appendFileSync(
      join(directory, 'sent.jsonl'),
      `${JSON.stringify({ id: message.id, jid: message.jid, ...content })}\n`,
    );
  },
  onQr: () => {
    if (process.env['FAKE_WHATSAPP_AUTO_LINK'] === '1') setImmediate(() => whatsapp.link());
  },
});

function revive(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && typeof (value as { base64?: unknown }).base64 === 'string') {
    return Buffer.from((value as { base64: string }).base64, 'base64');
  }
  return value;
}

const timer = setInterval(() => {
  const socket = whatsapp.current;
  if (!socket?.open) return;
  for (const name of readdirSync(inbox)
    .filter((file) => file.endsWith('.json'))
    .sort()) {
    const path = join(inbox, name);
    const payload = JSON.parse(readFileSync(path, 'utf8'), revive) as { messages: WhatsAppMessage[] };
    rmSync(path);
    socket.emit('messages.upsert', { type: 'notify', messages: payload.messages });
  }
}, 25);
timer.unref();

export const createWhatsAppSocket: WhatsAppSocketFactory = whatsapp.factory;
