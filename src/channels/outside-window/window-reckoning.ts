/**
 * Whether a participant's 24-hour customer-service window is open, as PromptPipe can tell: they wrote on the channel
 * less than 24 hours ago (the store's inbound messages), and the provider has not refused a free-form message to them
 * since (a 131047 or 63016 answered to the send call, after their last message: the provider's record is the one that
 * counts). That refusal is kept in memory: after a restart, the next refused message says it again. A failure reported
 * later in a receipt is not: by then the messages sent meanwhile are re-sent together (window-resend.ts).
 */
import type { Clock } from '../../domain/clock.ts';

export const CUSTOMER_SERVICE_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Participants whose closed window is remembered at once; beyond it the oldest is forgotten (it only costs a retry). */
const REMEMBERED_CLOSED_WINDOWS = 10_000;

export interface WindowReckoning {
  /** Why the window is closed, or undefined while it is open. */
  reason(participantId: string): Promise<string | undefined>;
  isClosed(participantId: string): Promise<boolean>;
  /** The provider refused a free-form message to this participant for being outside the window. */
  closed(participantId: string): void;
}

export function createWindowReckoning(options: {
  lastInboundAt(participantId: string): Promise<Date | undefined>;
  clock: Pick<Clock, 'now'>;
}): WindowReckoning {
  const { clock } = options;
  const saidClosed = new Map<string, Date>();

  async function reason(participantId: string): Promise<string | undefined> {
    const lastInbound = await options.lastInboundAt(participantId);
    if (!lastInbound) return 'never wrote';
    const closedAt = saidClosed.get(participantId);
    if (closedAt && closedAt.getTime() >= lastInbound.getTime()) return 'the provider said the window is closed';
    if (clock.now().getTime() - lastInbound.getTime() >= CUSTOMER_SERVICE_WINDOW_MS) {
      return 'no message from the participant in 24 hours';
    }
    return undefined;
  }

  return {
    reason,
    isClosed: async (participantId) => (await reason(participantId)) !== undefined,
    closed(participantId) {
      saidClosed.delete(participantId);
      if (saidClosed.size >= REMEMBERED_CLOSED_WINDOWS) {
        const oldest = saidClosed.keys().next().value;
        if (oldest !== undefined) saidClosed.delete(oldest);
      }
      saidClosed.set(participantId, clock.now());
    },
  };
}
