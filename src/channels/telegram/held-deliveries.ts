/**
 * A bot cannot write to someone who has not opened its chat, so a Telegram participant's messages (the enrolment
 * greeting first) are held, each its one job row, until their chat is bound (`TelegramNotLinkedError` → the delivery
 * hold). Binding the chat wakes them at once (`JobRepository.wakeHeld` with the participant's wake key) rather than at
 * the end of the hold, in the binding's transaction.
 */
import type { Store } from '../../store/store.ts';
import { DeliveryDeferredError } from '../channel.ts';

/** The longest a delivery to a participant who has not opened the link waits before it is tried again. */
export const NOT_LINKED_HOLD_MS = 60 * 60 * 1000;

/** What wakes the deliveries held for this participant's link (`jobs.wake_on`). */
export function telegramLinkWakeKey(participantId: string): string {
  return `telegram-link:${participantId}`;
}

/** Thrown by `send` for a participant without a bound chat: the delivery waits for the link, it does not fail. */
export class TelegramNotLinkedError extends DeliveryDeferredError {
  readonly wakeOn: string;
  constructor(participantId: string, holdMs = NOT_LINKED_HOLD_MS) {
    super(`participant ${participantId} has not opened their Telegram link yet; the message waits`, holdMs);
    this.name = 'TelegramNotLinkedError';
    this.wakeOn = telegramLinkWakeKey(participantId);
  }
}

/**
 * Makes the participant's held deliveries due now, through the store it is given (the channel's own, so it joins the
 * binding's unit of work); returns how many.
 */
export function wakeLinkedDeliveries(store: Pick<Store, 'jobs'>, participantId: string, now: Date): Promise<number> {
  return store.jobs.wakeHeld(telegramLinkWakeKey(participantId), now);
}
