/** The HTTP routes the enabled channels receive on: webhooks of the gateways and providers, Telegram's link pages. */

import { createTelegramLinkRoutes } from '../api/routes/telegram-link-routes.ts';
import { createTelegramRoutes } from '../channels/telegram/telegram-webhook-route.ts';
import { createTwilioRoutes } from '../channels/twilio/twilio-webhook-route.ts';
import { createWebhookInboundRoutes } from '../channels/webhook/webhook-inbound-route.ts';
import { createWhatsAppCloudRoutes } from '../channels/whatsapp-cloud/whatsapp-cloud-webhook-route.ts';
import type { InboundService } from '../inbound/inbound-port.ts';
import { systemClock } from '../scheduling/clock.ts';
import type { Core } from './application.ts';
import type { ChannelSet } from './channels.ts';
import type { Receipts } from './delivery.ts';
import type { People } from './participants.ts';

export function channelRoutes(
  core: Core,
  parts: { channels: ChannelSet; inbound: InboundService; receipts: Receipts; people: People },
) {
  const { config, log, clock } = core;
  const { inbound } = parts;
  const { providerReceipts } = parts.receipts;
  const { participants } = parts.people;
  const { channels, telegramChannel, telegramSettings } = parts.channels;
  return [
    ...(channels.get('webhook')
      ? [
          createWebhookInboundRoutes({
            inbound,
            secret: config.channel.webhookSecret,
            clock,
            signingClock: systemClock,
            toleranceMs: config.channel.webhookToleranceMs,
            host: config.api.host,
            log,
          }),
        ]
      : []),
    ...(channels.get('whatsapp-cloud') && config.channel.whatsappCloud
      ? [createWhatsAppCloudRoutes({ inbound, receipts: providerReceipts, ...config.channel.whatsappCloud, log })]
      : []),
    ...(channels.get('twilio') && config.channel.twilio
      ? [createTwilioRoutes({ inbound, receipts: providerReceipts, ...config.channel.twilio, log })]
      : []),
    ...(telegramChannel
      ? [
          createTelegramLinkRoutes({
            participants,
            linkFor: (id) => telegramChannel.linkFor(id),
            isLinked: (id) => telegramChannel.isLinked(id),
          }),
        ]
      : []),
    ...(telegramChannel && telegramSettings?.mode === 'webhook' && telegramSettings.webhookSecret
      ? [
          createTelegramRoutes({
            secret: telegramSettings.webhookSecret,
            handleUpdate: (update) => telegramChannel.handleUpdate(update),
          }),
        ]
      : []),
  ];
}
