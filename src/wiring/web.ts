/**
 * The HTTP server: who is asking (staff sessions, personal tokens, the API token) and the audit trail of what they
 * do, the API (ours and the original PromptPipe's), the channels' webhooks, the dashboard and the participant chat.
 */
import type { FastifyInstance } from 'fastify';
import packageJson from '../../package.json' with { type: 'json' };
import { createApiServer } from '../api/api-server.ts';
import { createAuthThrottle } from '../api/auth-throttle.ts';
import { createAlertApiRoutes } from '../api/routes/alert-routes.ts';
import { createPauseApiRoutes } from '../api/routes/pause-routes.ts';
import { createStudyRoutes } from '../api/routes/study-routes.ts';
import { createTakeoverApiRoutes } from '../api/routes/takeover-routes.ts';
import { TELEGRAM_CHANNEL } from '../channels/telegram/telegram-inbound.ts';
import { WEB_CHAT_CHANNEL } from '../channels/web-chat/web-chat-channel.ts';
import { WHATSAPP_WEB_CHANNEL } from '../channels/whatsapp-web/whatsapp-web-channel.ts';
import type { InboundService } from '../inbound/inbound-port.ts';
import type { CircuitBreakerLlm } from '../llm/circuit-breaker-llm.ts';
import { createOriginalTimers } from '../original/original-timers.ts';
import type { SharedManualClock } from '../scheduling/shared-manual-clock.ts';
import { createAuditTrail } from '../staff/audit-trail.ts';
import { createStaffAccess } from '../staff/staff-access.ts';
import { createChatRoutes } from '../web/chat-routes.ts';
import { createDashboardRoutes } from '../web/dashboard-routes.ts';
import { createLiveTranscripts } from '../web/live-transcript.ts';
import type { ApplicationOptions, Core } from './application.ts';
import { channelRoutes } from './channel-routes.ts';
import type { ChannelSet } from './channels.ts';
import type { Receipts } from './delivery.ts';
import { llmConfigured } from './llm.ts';
import type { People } from './participants.ts';
import type { Safety } from './safety.ts';
import type { Trials } from './trials.ts';

export const VERSION: string = packageJson.version;

export function wireWeb(
  core: Core,
  parts: {
    wallClock: ApplicationOptions['wallClock'];
    sharedClock: SharedManualClock | undefined;
    llm: CircuitBreakerLlm;
    channels: ChannelSet;
    receipts: Receipts;
    people: People;
    inbound: InboundService;
    safety: Safety;
    trials: Trials['trials'];
  },
): FastifyInstance {
  const { config, log, store, clock, newId, lock, runner, metrics, notifyRunner } = core;
  const { wallClock, llm, inbound, safety, trials } = parts;
  const { channels, channel, telegramChannel, whatsappWebChannel } = parts.channels;
  const { chatLinks, participants, originalSender, imports, pauses, broadcasts } = parts.people;
  // `chat_url`: absolute with PROMPTPIPE_PUBLIC_URL (a link to send as it is), else the path on this server.
  const chatUrlFor = chatLinks
    ? async (participant: { id: string; channel: string }) =>
        (participant.channel || channel.name) === WEB_CHAT_CHANNEL
          ? `${config.publicUrl ?? ''}${await chatLinks.pathFor(participant.id)}`
          : undefined
    : undefined;
  // One budget of wrong tokens per address for the API and the dashboard's sign-in: both take the API token.
  const authThrottle = createAuthThrottle(wallClock ? { now: wallClock } : {});
  // Who is asking: staff sessions (the dashboard, and the reads marked `dashboardSession`), personal tokens, the API
  // token. One for the API and the dashboard; the audit trail records what they do.
  const access = createStaffAccess({
    staff: store.staff,
    apiToken: config.api.token,
    idleTimeoutMs: config.dashboard.sessionIdleTimeoutMs,
    publicUrl: config.publicUrl,
    ...(wallClock ? { now: wallClock } : {}),
  });
  const auditTrail = createAuditTrail({ audit: store.audit, now: () => new Date((wallClock ?? Date.now)()), log });
  const server = createApiServer({
    config,
    authThrottle,
    access,
    auditTrail,
    chatUrlFor,
    ...(telegramChannel
      ? {
          telegramLinkFor: async (participant: { id: string; channel: string }) =>
            (participant.channel || channel.name) === TELEGRAM_CHANNEL
              ? telegramChannel.linkFor(participant.id)
              : undefined,
        }
      : {}),
    store,
    participants,
    clock,
    runner: parts.sharedClock ? { advanceTo: parts.sharedClock.advanceTo } : runner,
    channelRoutes: channelRoutes(core, parts),
    metrics,
    llmHealth: () => (llmConfigured(config) ? llm.health() : { status: 'not_configured', consecutive_failures: 0 }),
    ...(whatsappWebChannel
      ? { channelStates: () => ({ [WHATSAPP_WEB_CHANNEL]: { state: whatsappWebChannel.connectionState() } }) }
      : {}),
    log,
    httpLogger: log,
    version: VERSION,
    research: {
      export: { store, pseudonymKey: config.research.exportPseudonymKey, defaultChannel: channel.name },
      imports,
      broadcasts: { service: broadcasts, ratePerMinute: config.research.broadcastRate },
    },
    instanceId: config.cluster.instanceId,
    originalApi: {
      store,
      sender: originalSender,
      timers: createOriginalTimers({ store, lock, clock }),
      clock,
      newId,
      defaultCountry: config.conversation.defaultCountry,
      defaultSchedule: config.originalApi.defaultSchedule,
      llmConfigured: llmConfigured(config),
      onJobEnqueued: notifyRunner,
    },
  });
  const { alerts, takeovers } = safety;
  void server.register(createAlertApiRoutes({ store, alerts }));
  void server.register(createTakeoverApiRoutes({ store, takeovers }));
  void server.register(createPauseApiRoutes({ pauses }));
  // The dashboard always; the participant chat pages when the web-chat channel is on.
  void server.register(
    createDashboardRoutes({
      access,
      auditTrail,
      authThrottle,
      exportPseudonymKeySet: config.research.exportPseudonymKey !== undefined,
      evalReportsDir: config.research.evalReportsDir,
      store,
      participants,
      imports,
      clock,
      runner,
      channelNames: channels.names,
      chatLinks,
      ...(telegramChannel ? { telegramLinks: telegramChannel } : {}),
      live: createLiveTranscripts,
      trials,
      alerts,
      takeovers,
      pauses,
    }),
  );
  void server.register(createStudyRoutes({ trials }));
  if (chatLinks) {
    void server.register(
      createChatRoutes({ store, participants, inbound, links: chatLinks, live: createLiveTranscripts }),
    );
  }
  return server;
}
