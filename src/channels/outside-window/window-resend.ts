/**
 * A free-form message the provider accepted and then failed for being outside the 24-hour window (a status webhook
 * with 131047 on the Cloud API, a status callback with 63016 through Twilio) is sent again as a template, with its
 * polls. Only a 131047 returned by the send call took the template path before: the message was recorded as failed
 * and the participant never got it.
 *
 * The failed receipt is recorded as usual, and a `window_resend` job is queued; it runs under the participant's lock
 * and queues ONE delivery: the failed message and the polls sent right after it (the daily prompt's Done and
 * intensity polls fail the same way, their statuses arriving one by one), rebuilt from the transcript, as one template
 * (`followUps`, `outsideWindow`). Each message is re-sent at most once: only a message with exactly one send on
 * record, not delivered or read, and not already queued again, is taken; so the polls' own failures, arriving after,
 * find them re-sent and do nothing, and a template that fails in turn is never sent again.
 */

import type { Clock } from '../../domain/clock.ts';
import type { NewId } from '../../domain/ids.ts';
import type { Log } from '../../domain/log.ts';
import { ParticipantStatus } from '../../domain/participant.ts';
import { nextPollNumber, parseRecordedPoll } from '../../inbound/recorded-polls.ts';
import type { JobHandler } from '../../scheduling/job-runner.ts';
import type { Store, TranscriptEntry } from '../../store/store.ts';
import type { DeliveryReceipt, OutboundMessage, TemplateWindow } from '../channel.ts';
import type { ChannelRegistry } from '../channel-registry.ts';
import type { DeliveryReceipts } from '../delivery-receipts.ts';
import { DELIVER_MESSAGE_JOB, DELIVERY_MAX_ATTEMPTS, type DeliverMessagePayload } from '../outbox-messenger.ts';

export const WINDOW_RESEND_JOB = 'window_resend';
/** How far back the transcript is read for the failed message and the polls after it. */
const TRANSCRIPT_LOOKBACK = 50;
const FAILED_STATUSES = new Set(['failed', 'undelivered']);
const SENT_STATUSES = new Set(['queued', 'sent']);
const ON_DEVICE_STATUSES = new Set(['delivered', 'read']);

interface WindowResendPayload extends Record<string, unknown> {
  channel: string;
  outboundId: string;
  providerMessageId: string;
}

/** The receipts, plus: a failure that says "outside the window" queues the re-send (in the same call). */
export function withWindowResend(
  receipts: DeliveryReceipts,
  options: {
    store: Pick<Store, 'jobs' | 'deliveries'>;
    channels: Pick<ChannelRegistry, 'get'>;
    clock: Clock;
    newId: NewId;
    log: Log;
    onEnqueued?: () => void;
  },
): DeliveryReceipts {
  const { store, channels, clock, newId, log } = options;
  return {
    record: (delivery) => receipts.record(delivery),
    async receive(receipt: DeliveryReceipt) {
      const known = await receipts.receive(receipt);
      const window = channels.get(receipt.channel)?.templateWindow;
      if (!known || !window || !isWindowFailure(receipt, window)) return known;
      const sent = await store.deliveries.findByProviderId(receipt.channel, receipt.providerMessageId);
      if (!sent?.participantId) return known;
      const payload: WindowResendPayload = {
        channel: receipt.channel,
        outboundId: sent.outboundId,
        providerMessageId: receipt.providerMessageId,
      };
      const now = clock.now();
      await store.jobs.enqueue(
        {
          id: newId('job'),
          kind: WINDOW_RESEND_JOB,
          participantId: sent.participantId,
          runAt: now,
          payload,
          dedupKey: `${WINDOW_RESEND_JOB}:${sent.outboundId}`,
        },
        now,
      );
      log.info(
        { channel: receipt.channel, outboundId: sent.outboundId, errorCode: receipt.errorCode },
        'outside the WhatsApp window: the message will be sent again as a template',
      );
      options.onEnqueued?.();
      return known;
    },
  };
}

function isWindowFailure(receipt: DeliveryReceipt, window: TemplateWindow): boolean {
  return (
    FAILED_STATUSES.has(receipt.status) &&
    receipt.errorCode !== undefined &&
    window.closedErrorCodes.includes(receipt.errorCode)
  );
}

/** The `window_resend` job: queues the failed message and its polls as one template delivery (see above). */
export function createWindowResendHandler(options: {
  store: Store;
  clock: Clock;
  newId: NewId;
  log: Log;
  onEnqueued?: () => void;
}): JobHandler {
  const { store, clock, newId, log } = options;

  /** Whether this outbound message may be re-sent now: sent once (by `providerMessageId` when given), not on the device. */
  async function resendable(outboundId: string, providerMessageId?: string): Promise<boolean> {
    const records = await store.deliveries.listFor(outboundId);
    const sends = records.filter((record) => SENT_STATUSES.has(record.status) && record.providerMessageId);
    if (sends.length !== 1) return false;
    if (providerMessageId !== undefined && sends[0]?.providerMessageId !== providerMessageId) return false;
    return !records.some((record) => ON_DEVICE_STATUSES.has(record.status));
  }

  return async (job) => {
    const { channel, outboundId, providerMessageId } = job.payload as Partial<WindowResendPayload>;
    const participant = job.participantId ? await store.participants.get(job.participantId) : undefined;
    if (!channel || !outboundId || !providerMessageId || !participant) return;
    // A participant who opted out meanwhile is not written to again.
    if (participant.status === ParticipantStatus.WITHDRAWN) return;
    const queued = await store.jobs.listPending({ participantId: participant.id, kind: DELIVER_MESSAGE_JOB });
    const queuedIds = new Set(
      queued.flatMap((queuedJob) => {
        const message = (queuedJob.payload as Partial<DeliverMessagePayload>).message;
        return message ? [message.id, ...(message.followUps ?? []).map((followUp) => followUp.id)] : [];
      }),
    );
    if (queuedIds.has(outboundId) || !(await resendable(outboundId, providerMessageId))) return;

    const entries = await store.transcript.list(participant.id, { limit: TRANSCRIPT_LOOKBACK });
    const start = entries.findIndex((entry) => entry.outboundId === outboundId);
    if (start < 0) return;
    const burst: TranscriptEntry[] = [entries[start] as TranscriptEntry];
    for (const entry of entries.slice(start + 1)) {
      if (entry.role !== 'assistant' || entry.kind !== 'poll' || !entry.outboundId) break;
      if (queuedIds.has(entry.outboundId) || !(await resendable(entry.outboundId))) break;
      burst.push(entry);
    }
    const route = {
      participantId: participant.id,
      channel,
      to: participant.phoneNumber,
      ...(participant.language ? { language: participant.language } : {}),
    };
    const rebuilt = burst.map((entry) => rebuild(entry, route, entries.slice(0, entries.indexOf(entry))));
    const [first, ...followUps] = rebuilt;
    if (!first) return;
    const message: OutboundMessage = { ...first, outsideWindow: true, ...(followUps.length ? { followUps } : {}) };
    const payload: DeliverMessagePayload = { message };
    const now = clock.now();
    await store.jobs.enqueue(
      {
        id: newId('job'),
        kind: DELIVER_MESSAGE_JOB,
        participantId: participant.id,
        runAt: now,
        payload,
        maxAttempts: DELIVERY_MAX_ATTEMPTS,
      },
      now,
    );
    log.info(
      { participantId: participant.id, outboundIds: rebuilt.map((entry) => entry.id) },
      'messages refused outside the WhatsApp window queued again as one template',
    );
    options.onEnqueued?.();
  };
}

/** An outbound message again from its transcript entry: a poll with its options (numbered as first sent), or text. */
function rebuild(
  entry: TranscriptEntry,
  route: Pick<OutboundMessage, 'participantId' | 'channel' | 'to' | 'language'>,
  before: TranscriptEntry[],
): OutboundMessage {
  const id = entry.outboundId ?? '';
  const poll = entry.kind === 'poll' ? parseRecordedPoll(id, entry.content) : undefined;
  if (!poll) return { id, ...route, kind: 'text', text: entry.content };
  const firstNumber = nextPollNumber(before);
  return {
    id,
    ...route,
    kind: 'poll',
    text: poll.question,
    poll: {
      id,
      question: poll.question,
      options: poll.options,
      ...(route.language ? { language: route.language } : {}),
      ...(firstNumber > 1 ? { firstNumber } : {}),
    },
  };
}
