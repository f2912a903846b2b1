/**
 * The storage port of the original PromptPipe's records (its `/receipts`, `/response`, `/responses` and the response
 * figures of `/stats`): views over PromptPipe's own tables (inbound messages, the deliveries log) plus the two tables
 * of migration 021 for what has no home there (`POST /response` records, rows imported from an original database).
 *
 * Glossary:
 * - response: a message a sender wrote: every inbound message, every `POST /response` record, every imported one.
 * - receipt: one fact about an outbound message (`sent`, `delivered`, `read`, `failed`…): every deliveries row but
 *   `queued`, and every imported receipt.
 * - import key: an imported row's origin (`original:responses:42`); a key already stored is not imported again.
 */

export interface NewRecordedResponse {
  /** E.164. */
  sender: string;
  body: string;
  participantId?: string;
  receivedAt: Date;
  importKey?: string;
}

export interface NewImportedReceipt {
  recipient: string;
  status: string;
  sentAt: Date;
  importKey: string;
}

export interface ResponseRecord {
  from: string;
  body: string;
  time: Date;
  /** `message`: received on a channel; `api`: told by `POST /response`; `imported`: from an original database. */
  source: 'message' | 'api' | 'imported';
  /** A message that answered a poll (a branch prompt's options): the poll's question and the option chosen. */
  pollAnswer?: { question?: string; option: string };
}

export interface ReceiptRecord {
  /** E.164; empty when the participant it went to has been deleted. */
  to: string;
  /** As stored: a `DELIVERY_STATUSES` value, or the original's status for an imported receipt. */
  status: string;
  time: Date;
  source: 'delivery' | 'imported';
}

export interface RecordFilter {
  /** Only this sender (responses) or recipient (receipts), E.164. */
  phoneNumber?: string;
  /** At or after. */
  since?: Date;
  /** Before. */
  until?: Date;
  /** The newest `limit` (still returned oldest first); all when absent. */
  limit?: number;
}

export interface ResponseFigures {
  total: number;
  perSender: Record<string, number>;
  /** The sum of the bodies' lengths in characters. */
  totalLength: number;
}

export interface OriginalRecordRepository {
  /** Stores a response; false (nothing stored) when its import key is already there. */
  recordResponse(response: NewRecordedResponse): Promise<boolean>;
  /** Stores an imported receipt; false when its import key is already there. */
  recordImportedReceipt(receipt: NewImportedReceipt): Promise<boolean>;
  /** Of these import keys, the ones already stored (a dry run's "already imported"). */
  existingImportKeys(keys: readonly string[]): Promise<Set<string>>;
  /** Inbound messages and recorded responses, oldest first. */
  responses(filter?: RecordFilter): Promise<ResponseRecord[]>;
  /** Deliveries (except `queued`) and imported receipts, oldest first. */
  receipts(filter?: RecordFilter): Promise<ReceiptRecord[]>;
  /** Counted in the database, over the same rows as {@link responses}. */
  responseFigures(range?: Pick<RecordFilter, 'since' | 'until'>): Promise<ResponseFigures>;
}
