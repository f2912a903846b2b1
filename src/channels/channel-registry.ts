/**
 * The enabled channels (`PROMPTPIPE_CHANNEL`, a comma-separated list): every participant belongs to one of them
 * (`participant.channel`); the first listed is the default for new participants and for participants enrolled before
 * channels were per participant.
 */
import { AppError } from '../domain/errors.ts';
import type { Channel } from './channel.ts';

export interface ChannelRegistry {
  /** The first enabled channel. */
  readonly defaultChannel: Channel;
  /** Enabled channel names, in configuration order. */
  readonly names: readonly string[];
  /**
   * A participant's channel: the default one for an empty name (participants enrolled before channels were per
   * participant); undefined when that channel is not enabled on this server. Never another channel instead: a
   * participant is reached where the study decided (their message fails visibly, see `delivery-handler.ts`).
   */
  channelFor(name: string | undefined): Channel | undefined;
  /** Undefined when the channel is not enabled. */
  get(name: string): Channel | undefined;
  all(): readonly Channel[];
}

export function createChannelRegistry(channels: readonly Channel[]): ChannelRegistry {
  const [first] = channels;
  if (!first) throw new AppError('invalid_input', 'at least one channel must be enabled (PROMPTPIPE_CHANNEL)');
  const byName = new Map(channels.map((channel) => [channel.name, channel]));
  if (byName.size !== channels.length) throw new AppError('invalid_input', 'PROMPTPIPE_CHANNEL lists a channel twice');
  return {
    defaultChannel: first,
    names: channels.map((channel) => channel.name),
    channelFor: (name) => (name ? byName.get(name) : first),
    get: (name) => byName.get(name),
    all: () => channels,
  };
}
