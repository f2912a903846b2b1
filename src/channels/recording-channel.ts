/**
 * A channel for tests: records every message it is asked to deliver, and fails on demand to exercise retries.
 */
import { type Channel, type DeliveryResult, type OutboundMessage, PermanentDeliveryError } from './channel.ts';

export interface RecordingChannel extends Channel {
  /** Every message delivered, in order (failed attempts are not in it). */
  readonly delivered: OutboundMessage[];
  /** Every attempt, delivered or not. */
  readonly attempts: OutboundMessage[];
  /** While positive, each attempt fails (retryably) and decrements it. */
  failNext: number;
  /** While positive, each attempt fails with a `PermanentDeliveryError` and decrements it. */
  refuseNext: number;
}

export function createRecordingChannel(options: { name?: string; supportsPolls?: boolean } = {}): RecordingChannel {
  const channel: RecordingChannel = {
    name: options.name ?? 'recording',
    supportsPolls: options.supportsPolls ?? true,
    delivered: [],
    attempts: [],
    failNext: 0,
    refuseNext: 0,
    async send(message): Promise<DeliveryResult> {
      channel.attempts.push(message);
      if (channel.refuseNext > 0) {
        channel.refuseNext -= 1;
        throw new PermanentDeliveryError('recording channel: the provider refused the message', { code: '21610' });
      }
      if (channel.failNext > 0) {
        channel.failNext -= 1;
        throw new Error('recording channel: simulated delivery failure');
      }
      channel.delivered.push(message);
      return { providerMessageId: `provider_${message.id}` };
    },
  };
  return channel;
}
