/**
 * The `deliver_message` job handler: hands an outbox message to the channel. It runs under the participant's lock:
 * the lock is FIFO, so one participant's messages reach the gateway one at a time and in the order they were sent
 * (a prompt before its poll). The cost — a slow gateway delays that participant's next turn by at most the channel's
 * timeout — is the lesser evil for a study protocol.
 * Throwing makes the runner retry with back-off; the message's id stays the same across retries, so a channel with
 * idempotency keys never delivers it twice. A `PermanentDeliveryError` is not retried: the failure is recorded as a
 * delivery status and the job ends. The message goes out on the participant's channel (carried in the payload); when
 * this server does not run that channel, the delivery fails for good with the reason (`disabled-channels.ts`).
 * A receipt of a finished delivery (sent, or failed for good) is a `JobCompletion`: it commits in the transaction that
 * completes the job, one commit per delivery instead of two.
 */
import { AppError, errorMessage } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import type { MessageCatalogue } from '../i18n/message-catalogue.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { JobHandler } from '../scheduling/job-runner.ts';
import type { Job } from '../store/ports/job-queue.ts';
import {
  type Channel,
  DeliveryDeferredError,
  type OutboundMessage,
  PermanentDeliveryError,
  RecipientOptedOutError,
} from './channel.ts';
import type { ChannelRegistry } from './channel-registry.ts';
import type { DeliveryReceipts } from './delivery-receipts.ts';
import { notEnabledChannel } from './disabled-channels.ts';
import { DELIVER_MESSAGE_JOB, type DeliverMessagePayload } from './outbox-messenger.ts';
import { renderPollAsText } from './poll-text.ts';
import type { RecipientRefusal } from './recipient-opt-out.ts';

export { DELIVER_MESSAGE_JOB };

/** What the channel receives: unchanged where polls are supported, else the poll rendered as numbered text. */
export function adaptForChannel(
  message: OutboundMessage,
  channel: Pick<Channel, 'supportsPolls'>,
  messages?: MessageCatalogue,
): OutboundMessage {
  if (message.kind !== 'poll' || !message.poll || channel.supportsPolls) return message;
  const { poll: _poll, ...rest } = message;
  return { ...rest, kind: 'text', text: renderPollAsText(message.poll, messages) };
}

function readPayload(job: Job): OutboundMessage {
  const message = (job.payload as Partial<DeliverMessagePayload>).message;
  if (!message || typeof message.id !== 'string' || typeof message.to !== 'string') {
    // Retrying cannot fix a malformed payload, but failing loudly keeps it visible as a failed job.
    throw new AppError('invalid_input', `job ${job.id} has no valid message payload`);
  }
  return message;
}

export interface DeliveryHandlerOptions {
  /** The enabled channels: a message goes out on its own channel, else the default one. */
  channels: ChannelRegistry;
  metrics: Pick<Metrics, 'recordOutboundMessage'>;
  log: Log;
  /** Records sent / failed statuses; without it nothing is recorded (tests of the handler alone). */
  receipts?: DeliveryReceipts;
  /** The numbered-poll instruction in the participant's language; defaults to the built-in catalogues. */
  messages?: MessageCatalogue;
  /**
   * `Store.durable`: awaited before the message goes out, so what the participant receives is never newer than what
   * a power cut leaves on disk (SQLite group commit). Without it, nothing is awaited.
   */
  durable?: () => Promise<void>;
  /**
   * Called in the transaction that ends a delivery the participant refused (`RecipientOptedOutError`: they blocked
   * the bot), with the failure's receipt: their opt-out is queued there, so a crash cannot lose it.
   */
  onRecipientOptedOut?: (refusal: RecipientRefusal) => Promise<void>;
}

function failureCode(error: unknown): string | undefined {
  return error instanceof PermanentDeliveryError ? error.code : undefined;
}

export function createDeliveryHandler(options: DeliveryHandlerOptions): JobHandler {
  const { channels, metrics, log, receipts } = options;
  return async (job) => {
    const queued = readPayload(job);
    // A channel this server does not run fails the delivery for good: never sent on the default channel instead.
    const channel = channels.channelFor(queued.channel) ?? notEnabledChannel(queued.channel ?? '', channels.names);
    const message = adaptForChannel(queued, channel, options.messages);
    const about = { outboundId: message.id, participantId: message.participantId, channel: channel.name };
    // A failed sync is not a failed delivery: the job is retried without counting against the channel.
    await options.durable?.();
    let receipt: Parameters<DeliveryReceipts['record']>[0];
    try {
      const result = await channel.send(message);
      // A channel that only recorded the message (the webhook without a URL) must not count it as delivered.
      const outcome = result.status === 'not_delivered' ? 'not_delivered' : 'delivered';
      metrics.recordOutboundMessage(channel.name, outcome);
      log.debug({ ...about, attempt: job.attempts, ...result }, `message ${outcome.replace('_', ' ')}`);
      receipt = {
        outboundId: message.id,
        participantId: message.participantId,
        channel: channel.name,
        status: result.status ?? 'sent',
        ...(result.providerMessageId ? { providerMessageId: result.providerMessageId } : {}),
        ...(result.reason ? { errorMessage: result.reason } : {}),
      };
    } catch (error) {
      if (error instanceof DeliveryDeferredError) {
        // Not a failure: the delivery hold keeps the job for when the provider asked, spending no attempt.
        log.info({ ...about, waitMs: error.deliveryHoldMs, error: errorMessage(error) }, 'delivery deferred');
        throw error;
      }
      metrics.recordOutboundMessage(channel.name, 'failed');
      const permanent = error instanceof PermanentDeliveryError;
      const lastAttempt = job.attempts >= job.maxAttempts;
      const code = failureCode(error);
      const failed = {
        outboundId: message.id,
        participantId: message.participantId,
        channel: channel.name,
        status: 'failed',
        errorMessage: permanent
          ? errorMessage(error)
          : `gave up after ${job.attempts} attempts: ${errorMessage(error)}`,
        ...(code ? { errorCode: code } : {}),
      };
      if (permanent) {
        // Retrying cannot help: the failure is recorded (status, event, metric) as the job ends here.
        log.warn({ ...about, error: errorMessage(error), code }, 'delivery failed for good');
        const refused = error instanceof RecipientOptedOutError ? options.onRecipientOptedOut : undefined;
        if (!receipts && !refused) return undefined;
        const refusal = { ...about, reason: errorMessage(error) };
        return async () => {
          await receipts?.record(failed);
          await refused?.(refusal);
        };
      }
      // The last attempt fails the job for good, which is not a completion: its receipt is recorded now.
      if (lastAttempt) await receipts?.record(failed);
      log.warn(
        { ...about, attempt: job.attempts, error: errorMessage(error) },
        'delivery failed; the outbox retries it',
      );
      throw error;
    }
    // The receipt commits with the job's completion: one transaction per delivery.
    return receipts ? () => receipts.record(receipt) : undefined;
  };
}
