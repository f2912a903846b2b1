/**
 * The channel port: how messages reach participants and come back.
 * What a channel receives goes to the inbound service (`inbound/inbound-port.ts`).
 *
 * Adapters: `webhook/` (generic HTTP gateway), `console/` (terminal), and the fake for tests. Designed for the ones
 * that come next: WhatsApp via Baileys (real polls), the WhatsApp Cloud API (24-hour window, templates), Twilio SMS,
 * a web chat.
 */

export interface OutboundPoll {
  id: string;
  question: string;
  options: string[];
  /** The participant's language when it was sent: a channel without polls words its numbered instruction in it. */
  language?: string;
  /**
   * The number of the first option where a channel without polls numbers them (default 1): a poll sent right after
   * another continues its numbers, so a bare number names one option (`inbound/recorded-polls.ts`).
   */
  firstNumber?: number;
}

/** One message to deliver. `id` is the idempotency key: a channel that accepts one must not deliver twice. */
export interface OutboundMessage {
  id: string;
  participantId: string;
  /** The channel to deliver on (the participant's); absent in messages queued before channels were per participant. */
  channel?: string;
  /** E.164. */
  to: string;
  kind: 'text' | 'poll';
  text: string;
  poll?: OutboundPoll;
  /** The participant's language, where a template is chosen by it (outside the WhatsApp window; set on delivery). */
  language?: string;
  /**
   * Outside the WhatsApp window: the polls queued right behind this message, sent with it in ONE template message
   * (a daily prompt and its polls: one paid template, not three). Their receipts are this message's.
   */
  followUps?: OutboundMessage[];
  /** The provider said the window is closed (131047, 63016): send it as a template whatever the channel reckons. */
  outsideWindow?: boolean;
}

/**
 * A channel with a customer-service window (WhatsApp, directly or through Twilio): outside it, only an approved
 * template may be sent. The outbox asks it whether a delivery is outside (to send the polls queued behind the
 * message in the same template), and re-sends what a provider failed afterwards for being outside.
 */
export interface TemplateWindow {
  /** True when this message can only go as a template now (the participant has not written in 24 hours). */
  isClosed(message: OutboundMessage): Promise<boolean>;
  /** Whether a message with these follow-ups still fits in one template message (the provider's length limit). */
  fitsOneTemplate(message: OutboundMessage): boolean;
  /** The provider's error codes that say "outside the window" in a failed receipt (131047; 63016). */
  readonly closedErrorCodes: readonly string[];
}

export interface DeliveryResult {
  providerMessageId?: string;
  /**
   * Where the channel knows more than "accepted" at once (e.g. a console printed it: `delivered`; a webhook channel
   * without a URL only recorded it: `not_delivered`, with `reason`). Default `sent`.
   */
  status?: DeliveryStatus;
  /** Why a `not_delivered` message was not sent; shown as the delivery's error. */
  reason?: string;
}

/**
 * What became of an outbound message, as receipts report it. `queued` and `sent`: accepted by the provider;
 * `delivered` and `read`: on the participant's device; `failed`: given up (permanent error, or retries exhausted);
 * `undelivered`: the provider could not reach the device; `not_delivered`: deliberately not sent, only recorded
 * (the webhook channel without `PROMPTPIPE_WEBHOOK_URL`), the reason beside it.
 */
export const DELIVERY_STATUSES = [
  'queued',
  'sent',
  'delivered',
  'read',
  'failed',
  'undelivered',
  'not_delivered',
] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** A provider's report about one of our outbound messages (a webhook status, a Twilio status callback…). */
export interface DeliveryReceipt {
  channel: string;
  /** The provider's id of the message, as returned by `send`. */
  providerMessageId: string;
  status: DeliveryStatus;
  at?: Date;
  errorCode?: string;
  errorMessage?: string;
}

/**
 * Thrown by `send` when retrying cannot help (the provider refused the message: bad number, blocked, outside the
 * WhatsApp window without a template). The outbox records the failure and does not retry. Any other error is retried
 * with back-off.
 */
export class PermanentDeliveryError extends Error {
  readonly code: string | undefined;
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? {} : { cause: options.cause });
    this.name = 'PermanentDeliveryError';
    this.code = options.code;
  }
}

/**
 * A `PermanentDeliveryError` that says the participant refused the channel itself (blocked the Telegram bot): the
 * outbox withdraws them as if they had sent STOP (`recipient-opt-out.ts`), and START brings them back.
 */
export class RecipientOptedOutError extends PermanentDeliveryError {
  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super(message, options);
    this.name = 'RecipientOptedOutError';
  }
}

/**
 * Thrown by `send` when the provider asks to be called again later (a rate limit naming its wait: Telegram's 429
 * with `retry_after`). The delivery is held that long, its attempt not spent (`delivery-hold.ts`): a rate limit says
 * nothing about the message.
 */
export class DeliveryDeferredError extends Error {
  /** How long the provider asked to wait, in milliseconds. */
  readonly deliveryHoldMs: number;
  constructor(message: string, waitMs: number) {
    super(message);
    this.name = 'DeliveryDeferredError';
    this.deliveryHoldMs = waitMs;
  }
}

export interface Channel {
  readonly name: string;
  /** False: polls are sent as text with a numbered list, and numeric or exact-text replies become poll answers. */
  readonly supportsPolls: boolean;
  /**
   * Rejects when the message was not delivered: with `PermanentDeliveryError` when retrying cannot help, with any
   * other error when it may (the outbox retries it with back-off).
   */
  send(message: OutboundMessage): Promise<DeliveryResult>;
  /** True when the provider itself confirms an opt-out (Twilio SMS answers STOP): PromptPipe sends no confirmation. */
  readonly confirmsOptOut?: boolean;
  /** Present on channels with a customer-service window (WhatsApp Cloud API; Twilio with a `whatsapp:` sender). */
  readonly templateWindow?: TemplateWindow;
  /** Starts receiving, where the channel pulls or holds a connection (the webhook channel is pushed to over HTTP). */
  start?(): Promise<void>;
  stop?(): Promise<void>;
}
