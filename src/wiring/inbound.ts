/**
 * The inbound pipeline: opt-out and opt-in keywords, recording and processing each participant's messages in order,
 * the model-outage hold, and the channels that push messages into it (Telegram, WhatsApp Web).
 */

import { createRecipientOptOutHandler, RECIPIENT_OPT_OUT_JOB } from '../channels/recipient-opt-out.ts';
import { TELEGRAM_CHANNEL } from '../channels/telegram/telegram-inbound.ts';
import type { ConversationFlow } from '../engine/conversation-flow.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import { createInboundService } from '../inbound/inbound-service.ts';
import { LLM_OUTAGE_RETRY_JOB } from '../inbound/llm-outage-hold.ts';
import { createOptOutHandler } from '../inbound/opt-out.ts';
import { createHeldTurnHandler, HELD_TURN_JOB } from '../safety/held-coach-turn.ts';
import type { Core } from './application.ts';
import type { ChannelSet } from './channels.ts';
import { llmConfigured } from './llm.ts';
import type { People } from './participants.ts';
import type { Safety } from './safety.ts';

export function wireInbound(
  core: Core,
  parts: { flow: ConversationFlow; messages: MessageCatalogue; channels: ChannelSet; people: People; safety: Safety },
) {
  const { config, log, store, clock, newId, messenger, lock, metrics, runner, notifyRunner } = core;
  const { flow, messages, safety } = parts;
  const { participants } = parts.people;
  const { channels, telegramChannel, whatsappWebChannel } = parts.channels;
  const optOut = createOptOutHandler({
    store,
    clock,
    participants,
    messenger,
    channels,
    keywords: { optOut: config.channel.optOutKeywords, optIn: config.channel.optInKeywords },
    log,
    messages,
  });
  const inbound = createInboundService({
    store,
    flow,
    participants,
    clock,
    newId,
    log,
    metrics,
    autoEnroll: config.conversation.autoEnrollNewUsers,
    messages,
    optOut,
    lock,
    safety: safety.screen,
    takeover: safety.takeovers,
    answerWhilePaused: config.safety.pauseAnswersMessages,
    // Only for a configured model: without one, every turn answers "assistant unavailable" at once.
    ...(llmConfigured(config)
      ? {
          outage: {
            messenger,
            retryForMs: config.llm.outageRetryForMs,
            notice: (participant) => config.llm.outageNotice ?? messages.t(participant.language, 'reply.outageNotice'),
            notify: notifyRunner,
            onOutage: (outcome) => metrics.recordLlmOutage?.(outcome),
          },
        }
      : {}),
  });
  // Without the participant lock: the flow takes it itself.
  runner.register(
    HELD_TURN_JOB,
    createHeldTurnHandler({ store, clock, log, flow, answerWhilePaused: config.safety.pauseAnswersMessages }),
    { lock: false },
  );
  // Without the participant lock: the flow takes it itself, and the inbound pipeline keeps arrival order.
  runner.register(LLM_OUTAGE_RETRY_JOB, (job) => inbound.retryHeld(job), { lock: false });
  // Without the participant lock: withdrawing takes it itself.
  runner.register(RECIPIENT_OPT_OUT_JOB, createRecipientOptOutHandler(optOut), { lock: false });
  telegramChannel?.attach({
    inbound,
    onBlocked: async (participantId) => {
      await optOut.recipientRefused({ participantId, channel: TELEGRAM_CHANNEL, reason: 'blocked the bot' });
    },
  });
  whatsappWebChannel?.attachInbound(inbound);
  return inbound;
}
