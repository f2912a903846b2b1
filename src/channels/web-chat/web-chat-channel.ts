/**
 * The `webchat` channel: participants talk to the coach on a private page, `/chat/<token>` (see src/web/chat-routes.ts).
 *
 * Delivery is pull-based: the outbox has already recorded every outbound message in the participant's transcript,
 * and the page streams that transcript (server-sent events). So `send` only acknowledges; the message is "delivered"
 * once it is committed, and the provider id is the outbound id. Polls are real buttons on the page, so this channel
 * supports polls natively; a click comes back as a structured poll answer.
 */
import type { Channel } from '../channel.ts';

export const WEB_CHAT_CHANNEL = 'webchat';

export function createWebChatChannel(): Channel {
  return {
    name: WEB_CHAT_CHANNEL,
    supportsPolls: true,
    async send(message) {
      return { providerMessageId: message.id };
    },
  };
}
