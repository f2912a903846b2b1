/**
 * Participants whose channel this server does not run: someone enrolled by `promptpipe chat` (the console channel)
 * while the server runs with `PROMPTPIPE_CHANNEL=webhook`, or a channel since removed from the list. Their messages
 * are never sent on another channel instead (the study decided where a participant is reached): each delivery fails
 * with {@link channelNotEnabledMessage}, and the server names them at start-up.
 */
import type { Log } from '../domain/log.ts';
import type { ParticipantRepository } from '../store/ports/conversation-store.ts';
import { type Channel, PermanentDeliveryError } from './channel.ts';
import { CONSOLE_CHANNEL } from './console/console-channel.ts';

/** The failure code of a delivery for a channel this server does not run. */
export const CHANNEL_NOT_ENABLED = 'channel_not_enabled';

const notEnabledHere = (enabled: readonly string[]): string =>
  `is not enabled on this server (enabled: ${enabled.join(', ')})`;

/** The console channel is the terminal of `promptpipe chat`: enabling it on a server would print to its log. */
function remedy(channel: string, enabled: readonly string[]): string {
  const enable =
    channel === CONSOLE_CHANNEL
      ? 'talk to them in the terminal (promptpipe chat --phone <number>)'
      : 'add it to PROMPTPIPE_CHANNEL';
  return `${enable}, or move the participant to an enabled channel (PUT … {"channel": "${enabled[0] ?? ''}"})`;
}

/** The delivery error: what is wrong and the two ways out. */
export function channelNotEnabledMessage(channel: string, enabled: readonly string[]): string {
  return `channel ${channel} ${notEnabledHere(enabled)}: the message is not sent; ${remedy(channel, enabled)}`;
}

/**
 * Stands in for a channel this server does not run: every delivery fails for good (recorded as `failed` with the
 * reason, a `delivery-failed` event, counted as failed), since retrying cannot enable it.
 */
export function notEnabledChannel(name: string, enabled: readonly string[]): Channel {
  return {
    name,
    // The message is not sent at all: no need to render its poll as text.
    supportsPolls: true,
    async send() {
      throw new PermanentDeliveryError(channelNotEnabledMessage(name, enabled), { code: CHANNEL_NOT_ENABLED });
    },
  };
}

/**
 * Logs one warning per channel that has participants (not withdrawn) but is not enabled here; returns the counts.
 * Participants with an empty channel are on the default channel, which is always enabled.
 */
export async function warnAboutDisabledChannels(options: {
  participants: Pick<ParticipantRepository, 'countByChannel'>;
  enabled: readonly string[];
  log: Log;
}): Promise<Map<string, number>> {
  const { enabled, log } = options;
  const stranded = new Map<string, number>();
  for (const [channel, count] of await options.participants.countByChannel()) {
    if (channel === '' || enabled.includes(channel)) continue;
    stranded.set(channel, count);
    log.warn(
      { channel, participants: count },
      `${count} participant(s) on channel ${channel}, which ${notEnabledHere(enabled)}: their messages fail ` +
        `instead of being sent (never on another channel); ${remedy(channel, enabled)}`,
    );
  }
  return stranded;
}
