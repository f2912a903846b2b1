/**
 * WhatsApp Web poll votes: a vote is decrypted with the poll's stored secret (by Baileys) into the structured poll
 * answer; a vote that cannot be read is recorded as a `poll-vote-ignored` event, never silently dropped.
 */

import type { Clock } from '../../domain/clock.ts';
import type { Log } from '../../domain/log.ts';
import type { ChannelInboundMessage } from '../../inbound/inbound-port.ts';
import type { Store, WhatsAppSentMessage } from '../../store/store.ts';
import { unwrapContent } from './inbound-content.ts';
import { selectedOptionNames } from './poll-option-hash.ts';
import { userJid } from './whatsapp-jid.ts';
import type { WhatsAppMessage, WhatsAppMessageKey, WhatsAppSocket } from './whatsapp-socket.ts';
import { WHATSAPP_WEB_CHANNEL } from './whatsapp-web-names.ts';

export function createPollVoteReader(options: { store: Store; clock: Clock; log: Log }) {
  const { store, clock, log } = options;
  return { decryptVote };

  /** The structured answer of a vote, or undefined (recorded) when its poll is unknown or it cannot be decrypted. */
  async function decryptVote(
    socket: WhatsAppSocket,
    message: WhatsAppMessage,
    phone: string,
  ): Promise<ChannelInboundMessage['pollAnswer']> {
    const update = unwrapContent(message.message)?.pollUpdateMessage;
    const pollMessageId = update?.pollCreationMessageKey?.id ?? undefined;
    const vote = update?.vote;
    const poll = pollMessageId ? await store.whatsappMessages.get(pollMessageId) : undefined;
    if (!poll?.poll || !vote?.encPayload || !vote.encIv) {
      await recordIgnoredVote(message, phone, poll ? 'vote without payload' : 'unknown poll', pollMessageId);
      return undefined;
    }
    const hashes = tryDecrypt(socket, message.key, poll, { encPayload: vote.encPayload, encIv: vote.encIv });
    if (!hashes) {
      await recordIgnoredVote(message, phone, 'vote could not be decrypted', pollMessageId, poll.participantId);
      return undefined;
    }
    const [option] = selectedOptionNames(hashes, poll.poll.options);
    if (option === undefined) {
      // An empty vote is a withdrawn one; there is nothing to answer.
      log.info({ pollMessageId, from: phone }, 'whatsapp-web: poll vote withdrawn');
      return undefined;
    }
    return { pollId: poll.outboundId, question: poll.poll.question, option };
  }

  /**
   * WhatsApp encrypts a vote for the jids as the voter's phone addressed them: phone-number jids, or LIDs in chats
   * that moved to LID addressing. Every plausible pair is tried; AES-GCM's tag rejects the wrong ones.
   */
  function tryDecrypt(
    socket: WhatsAppSocket,
    key: WhatsAppMessageKey,
    poll: WhatsAppSentMessage,
    vote: { encPayload: Uint8Array; encIv: Uint8Array },
  ): Uint8Array[] | undefined {
    const unique = (values: (string | null | undefined)[]) => [
      ...new Set(values.filter((value): value is string => Boolean(value)).map(userJid)),
    ];
    const creators = unique([socket.user?.id, socket.user?.lid]);
    const voters = unique([key.participant, key.participantAlt, key.remoteJid, key.remoteJidAlt, poll.remoteJid]);
    const messageSecret = Buffer.from(poll.poll?.secret ?? '', 'base64');
    for (const pollCreatorJid of creators) {
      for (const voterJid of voters) {
        try {
          return socket.decryptPollVote(vote, {
            pollMessageId: poll.providerMessageId,
            pollCreatorJid,
            voterJid,
            messageSecret,
          });
        } catch {
          // Not this pair.
        }
      }
    }
    return undefined;
  }

  async function recordIgnoredVote(
    message: WhatsAppMessage,
    phone: string,
    reason: string,
    pollMessageId: string | undefined,
    participantId?: string,
  ): Promise<void> {
    log.warn(
      { providerMessageId: message.key.id, pollMessageId, from: phone, reason },
      'whatsapp-web: poll vote ignored',
    );
    await store.events.record({
      ...(participantId ? { participantId } : {}),
      type: 'poll-vote-ignored',
      data: {
        channel: WHATSAPP_WEB_CHANNEL,
        reason,
        from: phone,
        provider_message_id: message.key.id ?? null,
        poll_message_id: pollMessageId ?? null,
      },
      createdAt: clock.now(),
    });
  }
}
