/**
 * The `deliver_message` job handler: hands an outbox message to the channel. It runs under the participant's lock:
 * the lock is FIFO, so one participant's messages reach the gateway one at a time and in the order they were sent
 * (a prompt before its poll). The cost — a slow gateway delays that participant's next turn by at most the channel's
 * timeout — is the lesser evil for a study protocol.
 * Throwing makes the runner retry with back-off; the message's id stays the same across retries, so a channel with
 * idempotency keys never delivers it twice.
 */
import { AppError, errorMessage } from '../domain/errors.ts';
import type { Log } from '../observability/log.ts';
import type { Metrics } from '../observability/metrics.ts';
import type { JobHandler } from '../scheduling/job-runner.ts';
import type { Job } from '../store/store.ts';
import type { Channel, OutboundMessage } from './channel.ts';
import { DELIVER_MESSAGE_JOB, type DeliverMessagePayload } from './outbox-messenger.ts';
import { renderPollAsText } from './poll-text.ts';

export { DELIVER_MESSAGE_JOB };

/** What the channel receives: unchanged where polls are supported, else the poll rendered as numbered text. */
export function adaptForChannel(message: OutboundMessage, channel: Pick<Channel, 'supportsPolls'>): OutboundMessage {
  if (message.kind !== 'poll' || !message.poll || channel.supportsPolls) return message;
  const { poll: _poll, ...rest } = message;
  return { ...rest, kind: 'text', text: renderPollAsText(message.poll) };
}

function readPayload(job: Job): OutboundMessage {
  const message = (job.payload as Partial<DeliverMessagePayload>).message;
  if (!message || typeof message.id !== 'string' || typeof message.to !== 'string') {
    // Retrying cannot fix a malformed payload, but failing loudly keeps it visible as a failed job.
    throw new AppError('invalid_input', `job ${job.id} has no valid message payload`);
  }
  return message;
}

export function createDeliveryHandler(options: {
  channel: Channel;
  metrics: Pick<Metrics, 'recordOutboundMessage'>;
  log: Log;
}): JobHandler {
  const { channel, metrics, log } = options;
  return async (job) => {
    const message = adaptForChannel(readPayload(job), channel);
    try {
      const result = await channel.send(message);
      metrics.recordOutboundMessage(channel.name, 'delivered');
      log.debug(
        { outboundId: message.id, participantId: message.participantId, attempt: job.attempts, ...result },
        'message delivered',
      );
    } catch (error) {
      metrics.recordOutboundMessage(channel.name, 'failed');
      log.warn(
        {
          outboundId: message.id,
          participantId: message.participantId,
          attempt: job.attempts,
          error: errorMessage(error),
        },
        'delivery failed; the outbox retries it',
      );
      throw error;
    }
  };
}
