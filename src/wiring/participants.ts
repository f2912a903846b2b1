/**
 * Participants and what acts on them from outside a conversation: the participant service, web-chat links, the
 * original PromptPipe's prompts and schedules, bulk imports and their greetings, pauses, broadcasts.
 */
import { WEB_CHAT_CHANNEL } from '../channels/web-chat/web-chat-channel.ts';
import type { ConversationFlow } from '../engine/conversation-flow.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { LlmClient } from '../llm/llm.ts';
import { createScheduleHandler, ORIGINAL_SCHEDULE_JOB } from '../original/original-schedule-jobs.ts';
import { createOriginalSender } from '../original/original-sender.ts';
import { createParticipantService } from '../participants/participant-service.ts';
import { createPauseService, PARTICIPANT_RESUME_JOB } from '../participants/pause-service.ts';
import {
  BROADCAST_MESSAGE_JOB,
  createBroadcastHandler,
  createBroadcastService,
} from '../research/broadcasts/broadcast-service.ts';
import { createGreetingHandler, ENROLL_GREETING_JOB } from '../research/import/greeting-jobs.ts';
import { createImportService } from '../research/import/import-service.ts';
import { importColumnsOf } from '../trials/allocation-sequence.ts';
import { createWebChatLinks } from '../web/web-chat-links.ts';
import type { Core } from './application.ts';
import type { ChannelSet } from './channels.ts';
import type { Trials } from './trials.ts';

export type People = ReturnType<typeof wireParticipants>;

export function wireParticipants(
  core: Core,
  parts: {
    flow: ConversationFlow;
    llm: LlmClient;
    messages: MessageCatalogue;
    channels: ChannelSet;
    study: Trials['study'];
  },
) {
  const { config, log, store, clock, newId, messenger, lock, runner, notifyRunner } = core;
  const { flow, llm, messages, study } = parts;
  const { channels, channel } = parts.channels;
  // The private web-chat links, when that channel is on (the dashboard shows them; enrolment returns `chat_url`).
  const chatLinks = channels.get(WEB_CHAT_CHANNEL) ? createWebChatLinks({ store, clock }) : undefined;
  const participants = createParticipantService({
    // Deleting revokes the links in its own commit; this ends the chat streams they still have open.
    ...(chatLinks ? { onDeleted: (participantId: string) => chatLinks.revoked(participantId) } : {}),
    store,
    flow,
    messenger,
    lock,
    clock,
    newId,
    log,
    defaultCountry: config.conversation.defaultCountry,
    channelNames: channels.names,
    prepTimeMinutes: config.scheduling.prepTimeMinutes,
    onJobEnqueued: notifyRunner,
    defaultLanguage: config.language.defaultLanguage,
    messages,
    ...(study ? { study } : {}),
  });
  // The original PromptPipe's API: its prompts go out like organiser messages, its schedules are durable jobs.
  const originalSender = createOriginalSender({ store, participants, messenger, llm, lock, clock, log });
  runner.register(
    ORIGINAL_SCHEDULE_JOB,
    createScheduleHandler({ store, sender: originalSender, clock, newId, log, onJobEnqueued: notifyRunner }),
  );
  // Greetings of bulk imports run without the participant lock: greeting takes it itself.
  runner.register(ENROLL_GREETING_JOB, createGreetingHandler(flow), { lock: false });
  const imports = createImportService({
    store,
    participants,
    clock,
    newId,
    defaultCountry: config.conversation.defaultCountry,
    channels: channels.names,
    greetingRatePerMinute: config.research.enrollGreetingRate,
    onJobEnqueued: notifyRunner,
    // A stratified trial may stratify on bulk-import columns: the readers accept those too.
    extraColumns: study ? importColumnsOf(study.design) : [],
  });
  const pauses = createPauseService({ store, clock, newId, participants, onEnqueued: notifyRunner });
  // Without the participant lock: resuming updates the participant, which takes it itself.
  runner.register(PARTICIPANT_RESUME_JOB, (job) => pauses.resumeOnDate(job), { lock: false });
  runner.register(BROADCAST_MESSAGE_JOB, createBroadcastHandler({ store, clock, messenger }));
  const broadcasts = createBroadcastService({
    store,
    clock,
    newId,
    ratePerMinute: config.research.broadcastRate,
    defaultChannel: channel.name,
    onJobEnqueued: notifyRunner,
  });
  return { chatLinks, participants, originalSender, imports, pauses, broadcasts };
}
