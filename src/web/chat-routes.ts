/**
 * The participant's web chat: `/chat/<token>`. The token is the only credential (no cookie, no session): every route
 * resolves it to ONE participant and reads or writes only that participant's conversation. An unknown or revoked
 * token, or the link of a deleted participant, gets the same 404 page, so the page never tells whether a token
 * existed. Revoking a link (or deleting its participant) ends the live streams it still has open.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { WEB_CHAT_CHANNEL } from '../channels/web-chat/web-chat-channel.ts';
import { AppError } from '../domain/errors.ts';
import type { Participant } from '../domain/participant.ts';
import type { InboundService } from '../inbound/inbound-port.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import { canonicalTimeZone } from '../scheduling/schedule-time.ts';
import type { Store } from '../store/store.ts';
import { html } from './html.ts';
import type { LiveTranscripts } from './live-transcript.ts';
import { addPageSecurityHeaders } from './page-security.ts';
import { chatEntry } from './transcript-view.ts';
import type { WebChatLinks } from './web-chat-links.ts';
import { FALLBACK_TIME_ZONE } from './zoned-time.ts';

const MAX_MESSAGE_LENGTH = 4000;

export interface ChatRoutesOptions {
  store: Pick<Store, 'transcript'>;
  participants: Pick<ParticipantService, 'get'>;
  inbound: Pick<InboundService, 'receive'>;
  links: WebChatLinks;
  live: (app: FastifyInstance) => LiveTranscripts;
}

/**
 * The zone the chat shows times in: the participant's own, when the study knows it. Otherwise undefined: the page's
 * script shows them in the browser's zone (where the participant is), UTC until it has run.
 */
function chatTimeZone(participant: Participant): string | undefined {
  return participant.timezone ? canonicalTimeZone(participant.timezone) : undefined;
}

function notFound(reply: FastifyReply): FastifyReply {
  return reply
    .code(404)
    .header('content-type', 'text/html; charset=utf-8')
    .send(
      '<!doctype html><html lang="en"><title>Link not valid</title><p>This chat link is not valid (any more). Ask the study team for a new one.</p></html>',
    );
}

const tags = ['web chat'];

export function createChatRoutes(options: ChatRoutesOptions): FastifyPluginAsync {
  const { store, participants, inbound, links } = options;
  return async (app) => {
    const live = options.live(app);
    const stopListening = links.onRevoked((participantId) => live.end(participantId));
    app.addHook('onClose', async () => stopListening());
    addPageSecurityHeaders(app, 'no-referrer');
    const publicRoute = { config: { public: true } };
    const chat = (operationId: string, summary: string) => ({ ...publicRoute, schema: { operationId, tags, summary } });

    /**
     * The participant behind an active token; undefined too for a link left active by a deletion made before
     * deleting revoked links.
     */
    async function participantOf(token: string): Promise<Participant | undefined> {
      const participantId = await links.resolve(token);
      if (!participantId) return undefined;
      try {
        return await participants.get(participantId);
      } catch (error) {
        if (error instanceof AppError && error.code === 'not_found') return undefined;
        throw error;
      }
    }

    app.get(
      '/chat/:token',
      chat('getWebChatPage', 'The web chat page (HTML) of the participant the link names'),
      async (request, reply) => {
        const { token } = request.params as { token: string };
        const participant = await participantOf(token);
        if (!participant) return notFound(reply);
        const participantId = participant.id;
        const transcript = await store.transcript.list(participantId, { limit: 200 });
        const lastId = transcript.at(-1)?.id ?? 0;
        const timeZone = chatTimeZone(participant);
        const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">
<title>Your coach</title><link rel="icon" href="/dashboard/assets/favicon.svg" type="image/svg+xml"><link rel="stylesheet" href="/dashboard/assets/dashboard.css"></head>
<body class="chat-page"><main><h1>Hi${participant.name ? ` ${participant.name}` : ''}! Chat with your coach</h1>
<ol id="chat" class="chat" aria-live="polite" data-live="/chat/${token}/live?after=${lastId}" data-send="/chat/${token}/messages" data-time-zone="${timeZone ?? ''}">${transcript.map((entry) => chatEntry(entry, timeZone ?? FALLBACK_TIME_ZONE))}</ol>
<p id="chat-closed" class="error" role="alert" hidden>This chat has closed. Reload the page; if the link no longer works, ask the study team for a new one.</p>
<form id="chat-form"><label for="chat-input">Your message</label><textarea id="chat-input" name="text" rows="2" required maxlength="${MAX_MESSAGE_LENGTH}"></textarea><button type="submit">Send</button></form>
</main><script src="/dashboard/assets/chat.js" defer></script></body></html>`;
        return reply
          .header('content-type', 'text/html; charset=utf-8')
          .header('cache-control', 'no-store')
          .send(page.value);
      },
    );

    const liveRoute = chat('streamWebChat', 'The chat\u2019s new entries as server-sent events (HTML fragments)');
    app.get('/chat/:token/live', liveRoute, async (request, reply) => {
      const { token } = request.params as { token: string };
      const participant = await participantOf(token);
      if (!participant) return notFound(reply);
      const participantId = participant.id;
      const after = Number((request.query as { after?: string }).after ?? 0) || 0;
      const timeZone = chatTimeZone(participant) ?? FALLBACK_TIME_ZONE;
      live.stream(reply, {
        key: participantId,
        stillAllowed: async () => (await links.resolve(token)) === participantId,
        afterId: after,
        list: async (afterId) =>
          (await store.transcript.list(participantId, { limit: 200 })).filter((entry) => entry.id > afterId),
        render: (entry) => chatEntry(entry, timeZone)?.value ?? '',
      });
    });

    // JSON from the page's script; a cross-site form cannot send application/json without a CORS preflight.
    const send = chat('sendWebChatMessage', 'A message from the participant: JSON {"text"} or {"poll_id", "option"}');
    app.post('/chat/:token/messages', send, async (request, reply) => {
      const { token } = request.params as { token: string };
      const participantId = await links.resolve(token);
      if (!participantId) throw new AppError('not_found', 'this chat link is not valid');
      if (!request.headers['content-type']?.startsWith('application/json')) {
        throw new AppError('invalid_input', 'send JSON: {"text": "…"} or {"poll_id": "…", "option": "…"}');
      }
      const body = (request.body ?? {}) as { text?: unknown; poll_id?: unknown; option?: unknown };
      const participant = await participants.get(participantId);
      const option = typeof body.option === 'string' ? body.option.trim() : '';
      const text = typeof body.text === 'string' ? body.text.trim() : option;
      if (!text || text.length > MAX_MESSAGE_LENGTH) {
        throw new AppError('invalid_input', `a message needs text (1 to ${MAX_MESSAGE_LENGTH} characters)`);
      }
      const receipt = await inbound.receive({
        channel: WEB_CHAT_CHANNEL,
        from: participant.phoneNumber,
        text,
        ...(option
          ? { pollAnswer: { ...(typeof body.poll_id === 'string' ? { pollId: body.poll_id } : {}), option } }
          : {}),
      });
      return reply.code(202).send({ status: 'ok', result: { accepted: true, duplicate: receipt.duplicate } });
    });
  };
}
