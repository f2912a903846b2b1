/** `GET /dashboard/participants/<id>`: gathers what the participant page shows (participant-page.ts lays it out). */
import type { FastifyInstance } from 'fastify';
import { TELEGRAM_CHANNEL } from '../channels/telegram/telegram-inbound.ts';
import { WEB_CHAT_CHANNEL } from '../channels/web-chat/web-chat-channel.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { Store } from '../store/store.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import { participantPage } from './participant-page.ts';
import type { WebChatLinks } from './web-chat-links.ts';

/** The telegram channel's deep links (telegram-links.ts): each page view issues a new one-time link. */
export interface TelegramLinksView {
  linkFor(participantId: string): Promise<string>;
  isLinked(participantId: string): Promise<boolean>;
}

/** Recent events shown; the export has them all. */
const EVENTS_SHOWN = 30;

export function registerParticipantPageRoutes(
  app: FastifyInstance,
  options: {
    store: Store;
    participants: ParticipantService;
    channelNames: readonly string[];
    chatLinks: WebChatLinks | undefined;
    telegramLinks?: TelegramLinksView | undefined;
  },
  kit: DashboardRouteKit,
): void {
  const { store, participants } = options;
  app.get('/dashboard/participants/:id', kit.needs('read'), async (request, reply) => {
    const page = kit.context(request, reply, (request.query as { done?: string }).done);
    if (!page) return reply;
    const { id } = request.params as { id: string };
    const participant = await participants.get(id);
    const [state, transcript, events] = await Promise.all([
      participants.state(id),
      participants.history(id, { limit: 200 }),
      store.events.list({ participantId: id }),
    ]);
    const onWebChat = (participant.channel || options.channelNames[0]) === WEB_CHAT_CHANNEL;
    const chatPath = options.chatLinks && onWebChat ? await options.chatLinks.pathFor(id) : undefined;
    const telegramLinks =
      (participant.channel || options.channelNames[0]) === TELEGRAM_CHANNEL ? options.telegramLinks : undefined;
    const telegram = telegramLinks && {
      link: await telegramLinks.linkFor(id),
      linked: await telegramLinks.isLinked(id),
    };
    return kit.sendPage(
      reply,
      participantPage(page, {
        participant,
        state,
        transcript,
        events: events.slice(-EVENTS_SHOWN).reverse(),
        chatPath,
        telegram,
      }),
    );
  });
}
