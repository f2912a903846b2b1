/**
 * Outbound delivery: the `deliver_message` job hands each queued message to its channel, with delivery receipts,
 * re-sending as a template outside the WhatsApp window, polls bundled into templates, and deliveries held while
 * WhatsApp Web is not connected.
 */
import { createDeliveryHandler, DELIVER_MESSAGE_JOB } from '../channels/delivery-handler.ts';
import { createDeliveryReceipts } from '../channels/delivery-receipts.ts';
import { withTemplateBundling } from '../channels/outside-window/template-bundling.ts';
import {
  createWindowResendHandler,
  WINDOW_RESEND_JOB,
  withWindowResend,
} from '../channels/outside-window/window-resend.ts';
import { queueRecipientOptOut } from '../channels/recipient-opt-out.ts';
import { wakeHeldDeliveries, withDeliveryHold } from '../channels/whatsapp-web/delivery-hold.ts';
import { WHATSAPP_WEB_CHANNEL } from '../channels/whatsapp-web/whatsapp-web-channel.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { Job } from '../store/ports/job-queue.ts';
import type { Core } from './application.ts';
import type { ChannelSet } from './channels.ts';

export type Receipts = ReturnType<typeof wireDelivery>;

export function wireDelivery(core: Core, { channels, whatsappWebChannel }: ChannelSet, messages: MessageCatalogue) {
  const { log, store, clock, newId, metrics, runner, notifyRunner } = core;
  const receipts = createDeliveryReceipts({ store, clock, metrics, log });
  // A provider's "outside the window" failure (131047, 63016) re-sends the message as a template (window-resend.ts).
  const providerReceipts = withWindowResend(receipts, { store, channels, clock, newId, log, onEnqueued: notifyRunner });
  runner.register(WINDOW_RESEND_JOB, createWindowResendHandler({ store, clock, newId, log, onEnqueued: notifyRunner }));
  whatsappWebChannel?.attachReceipts(receipts);
  // Deliveries held while WhatsApp Web was not connected go out as soon as it is (each still one job row).
  whatsappWebChannel?.onConnected(() => {
    void wakeHeldDeliveries({ store, clock, log, channel: WHATSAPP_WEB_CHANNEL, notify: () => runner.notify() });
  });
  // Under the participant's lock: the lock is FIFO, so a prompt and its polls reach the gateway in the order they were
  // sent, never overlapping (a slow gateway must not see "Did you do it?" before the prompt).
  // A channel that is not connected (whatsapp-web before linking) asks for its deliveries to wait, not fail.
  runner.register(
    DELIVER_MESSAGE_JOB,
    withDeliveryHold({
      // Outside the WhatsApp window, a prompt's polls go in its template (template-bundling.ts).
      handler: withTemplateBundling({
        store,
        channels,
        receipts,
        clock,
        log,
        handler: createDeliveryHandler({
          channels,
          metrics,
          log,
          receipts,
          messages,
          durable: () => store.durable(),
          // A participant who blocked the bot is withdrawn, as by STOP (recipient-opt-out.ts).
          onRecipientOptedOut: (refusal) => queueRecipientOptOut(store, refusal, { now: clock.now(), newId }),
        }),
      }),
      clock,
      log,
      ...(whatsappWebChannel
        ? {
            holdBefore: (job: Job) => {
              const queued = (job.payload as { message?: { channel?: string } }).message;
              return channels.channelFor(queued?.channel) === whatsappWebChannel
                ? whatsappWebChannel.deliveryHold()
                : undefined;
            },
          }
        : {}),
    }),
    // Ordered: across instances too, one participant's deliveries are claimed one at a time in enqueue order.
    { ordered: true },
  );
  return { receipts, providerReceipts };
}
