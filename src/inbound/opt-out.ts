/**
 * Opt-out on every channel (research ethics): a message that is exactly one of the opt-out keywords (STOP, STOPALL,
 * UNSUBSCRIBE, CANCEL, END, QUIT by default; any case, spaces ignored) withdraws the participant — status `withdrawn`,
 * every job cancelled, a `participant-opted-out` event, no LLM turn — and gets one confirmation unless the channel
 * sends its own (Twilio answers STOP itself). `START` brings back a participant who opted out that way (status
 * `active`, schedule re-armed); a participant the organiser withdrew stays withdrawn.
 *
 * The keyword message itself is kept in the transcript, like every participant message.
 */

import type { Clock } from '../domain/clock.ts';
import type { Log } from '../domain/log.ts';
import { type Participant, ParticipantStatus } from '../domain/participant.ts';
import type { Messenger } from '../engine/messenger.ts';
import { createBuiltInMessageCatalogue } from '../i18n/built-in-catalogues.ts';
import type { MessageCatalogue, MessageKey } from '../i18n/message-catalogue.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { InboundMessage, Store } from '../store/store.ts';
import { unansweredMessageEntry } from './inbound-transcript.ts';

export const OPTED_OUT_EVENT = 'participant-opted-out';
export const OPTED_IN_EVENT = 'participant-opted-in';

export interface OptOutKeywords {
  /** Upper case, without spaces. */
  optOut: readonly string[];
  optIn: readonly string[];
}

export interface OptOutHandler {
  /** True when the message was an opt-out or opt-in keyword and has been dealt with (no turn follows). */
  handle(inbound: InboundMessage, participant: Participant): Promise<boolean>;
  /**
   * The channel says the participant refused it (blocked the Telegram bot): withdrawn as by STOP, with the same
   * `participant-opted-out` event (its `reason` says why), so START brings them back; no confirmation, which could
   * not reach them. False when there was nobody active to withdraw.
   */
  recipientRefused(refusal: { participantId: string; channel: string; reason: string }): Promise<boolean>;
}

/** `" stop "` → `STOP`; `"Stop all"` → `STOPALL`; a bot command counts as its word: `/stop` → `STOP`. */
export function normaliseKeyword(text: string): string {
  return text.replace(/\s+/g, '').replace(/^\//, '').toUpperCase();
}

export function createOptOutHandler(options: {
  store: Store;
  clock: Clock;
  participants: Pick<ParticipantService, 'update'>;
  messenger: Messenger;
  /** The enabled channels (`channels/channel-registry.ts`): whether the participant's channel confirms opt-outs. */
  channels: { channelFor(name: string | undefined): { readonly confirmsOptOut?: boolean } | undefined };
  keywords: OptOutKeywords;
  log: Log;
  /** The confirmations in the participant's language; defaults to the built-in catalogues. */
  messages?: MessageCatalogue;
}): OptOutHandler {
  const { store, clock, participants, messenger, channels, keywords, log } = options;
  const messages = options.messages ?? createBuiltInMessageCatalogue();

  async function recordKeyword(inbound: InboundMessage, participant: Participant, type: string): Promise<void> {
    const now = clock.now();
    await store.transaction(async (tx) => {
      await tx.transcript.append([unansweredMessageEntry(inbound)]);
      await tx.events.record({
        participantId: participant.id,
        type,
        data: { keyword: normaliseKeyword(inbound.text), channel: inbound.channel, status_before: participant.status },
        sourceMessageId: inbound.id,
        createdAt: now,
      });
    });
  }

  /** Withdrawn by their own opt-out (not by the organiser since): START may bring them back. */
  async function optedOutThemselves(participantId: string): Promise<boolean> {
    const [optOuts, updates] = await Promise.all([
      store.events.list({ participantId, type: OPTED_OUT_EVENT }),
      store.events.list({ participantId, type: 'participant-updated' }),
    ]);
    const lastOptOut = optOuts.at(-1);
    if (!lastOptOut) return false;
    const withdrawnByOrganiserSince = updates.some(
      (event) => event.id > lastOptOut.id && event.data['status_to'] === ParticipantStatus.WITHDRAWN,
    );
    return !withdrawnByOrganiserSince;
  }

  async function confirm(participant: Participant, key: MessageKey, inbound: InboundMessage): Promise<void> {
    if (channels.channelFor(participant.channel)?.confirmsOptOut) return;
    const text = messages.t(participant.language, key);
    await messenger.send(participant.id, { type: 'text', text }, { kind: 'notice', sourceMessageId: inbound.id });
  }

  return {
    async recipientRefused(refusal) {
      const participant = await store.participants.get(refusal.participantId);
      if (!participant || participant.status === ParticipantStatus.WITHDRAWN) return false;
      // As for STOP: the status first (every job cancelled), then the event that lets START tell it from the organiser.
      await participants.update(participant.id, { status: ParticipantStatus.WITHDRAWN });
      await store.events.record({
        participantId: participant.id,
        type: OPTED_OUT_EVENT,
        data: { channel: refusal.channel, reason: refusal.reason, status_before: participant.status },
        createdAt: clock.now(),
      });
      log.info(
        { participantId: participant.id, channel: refusal.channel },
        'participant refused the channel: opted out',
      );
      return true;
    },
    async handle(inbound, participant) {
      const keyword = normaliseKeyword(inbound.text);
      if (inbound.pollAnswer || keyword === '') return false;
      if (keywords.optOut.includes(keyword)) {
        if (participant.status === ParticipantStatus.WITHDRAWN) {
          await recordKeyword(inbound, participant, OPTED_OUT_EVENT);
          return true;
        }
        // Withdrawing cancels every job, queued deliveries included; the confirmation is queued after that, so it goes.
        // The event comes after the status change, so START can tell this withdrawal from a later one by the organiser.
        await participants.update(participant.id, { status: ParticipantStatus.WITHDRAWN });
        await recordKeyword(inbound, participant, OPTED_OUT_EVENT);
        await confirm(participant, 'notice.optOut', inbound);
        log.info({ participantId: participant.id, channel: inbound.channel }, 'participant opted out');
        return true;
      }
      if (keywords.optIn.includes(keyword) && participant.status === ParticipantStatus.WITHDRAWN) {
        if (!(await optedOutThemselves(participant.id))) return false;
        await recordKeyword(inbound, participant, OPTED_IN_EVENT);
        await participants.update(participant.id, { status: ParticipantStatus.ACTIVE });
        await confirm(participant, 'notice.optIn', inbound);
        log.info({ participantId: participant.id, channel: inbound.channel }, 'participant opted back in');
        return true;
      }
      return false;
    },
  };
}
