/**
 * WhatsApp poll votes, end-to-end encrypted inside the (already Signal-encrypted) vote message.
 *
 * A poll creation message carries a random 32-byte `messageSecret`. A voter's client derives a per-voter key from it
 * and encrypts a `PollVoteMessage` (the SHA-256 of each selected option's name) with AES-256-GCM:
 *
 *   sign   = pollMessageId ‖ pollCreatorJid ‖ voterJid ‖ "Poll Vote" ‖ 0x01
 *   key0   = HMAC-SHA256(key = 32 zero bytes, data = messageSecret)
 *   key    = HMAC-SHA256(key = key0, data = sign)
 *   aad    = pollMessageId ‖ 0x00 ‖ voterJid
 *   encPayload = ciphertext ‖ 16-byte GCM tag, with the 12-byte `encIv`
 *
 * This is the scheme Baileys implements (`decryptPollVote`), written here on node:crypto so that the channel keeps
 * only what it needs and the tests can produce real votes. Jids are "user@server" without a device suffix.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

const GCM_TAG_BYTES = 16;
const GCM_IV_BYTES = 12;

export interface PollVoteContext {
  /** The poll creation message's id (`key.id`). */
  pollMessageId: string;
  /** Who sent the poll: our own account's jid. */
  pollCreatorJid: string;
  /** Who voted. */
  voterJid: string;
  /** The poll creation message's 32-byte `messageContextInfo.messageSecret`. */
  messageSecret: Uint8Array;
}

export interface EncryptedPollVote {
  encPayload: Uint8Array;
  encIv: Uint8Array;
}

/** SHA-256 of the option's name: how a vote names the options it selects. */
export function pollOptionHash(option: string): Buffer {
  return createHash('sha256').update(option, 'utf8').digest();
}

function voteKey(context: PollVoteContext): Buffer {
  const sign = Buffer.concat([
    Buffer.from(context.pollMessageId),
    Buffer.from(context.pollCreatorJid),
    Buffer.from(context.voterJid),
    Buffer.from('Poll Vote'),
    Buffer.from([1]),
  ]);
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(context.messageSecret).digest();
  return createHmac('sha256', key0).update(sign).digest();
}

function additionalData(context: PollVoteContext): Buffer {
  return Buffer.from(`${context.pollMessageId}\u0000${context.voterJid}`);
}

/**
 * The selected options' hashes. Throws when the payload was not encrypted for this context (wrong poll, secret or
 * jids): GCM's tag check fails, so a wrong guess is never mistaken for a vote.
 */
export function decryptPollVote(vote: EncryptedPollVote, context: PollVoteContext): Buffer[] {
  const payload = Buffer.from(vote.encPayload);
  if (payload.length < GCM_TAG_BYTES) throw new Error('poll vote payload is shorter than its authentication tag');
  const decipher = createDecipheriv('aes-256-gcm', voteKey(context), Buffer.from(vote.encIv));
  decipher.setAAD(additionalData(context));
  decipher.setAuthTag(payload.subarray(payload.length - GCM_TAG_BYTES));
  const plain = Buffer.concat([decipher.update(payload.subarray(0, payload.length - GCM_TAG_BYTES)), decipher.final()]);
  return decodePollVoteMessage(plain);
}

/** What a voter's phone does (tests and the fake socket use it to produce real votes). */
export function encryptPollVote(selectedOptions: string[], context: PollVoteContext): EncryptedPollVote {
  const encIv = randomBytes(GCM_IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', voteKey(context), encIv);
  cipher.setAAD(additionalData(context));
  const plain = encodePollVoteMessage(selectedOptions.map(pollOptionHash));
  const encrypted = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
  return { encPayload: encrypted, encIv };
}

/** The options whose hashes were selected, in the poll's order. */
export function selectedOptionNames(hashes: Buffer[], options: readonly string[]): string[] {
  return options.filter((option) => hashes.some((hash) => hash.equals(pollOptionHash(option))));
}

// `PollVoteMessage { repeated bytes selectedOptions = 1; }` — one field, so it is encoded by hand rather than
// pulling a protobuf runtime into this module.
const SELECTED_OPTIONS_TAG = (1 << 3) | 2;

export function encodePollVoteMessage(selectedOptions: Buffer[]): Buffer {
  const parts: Buffer[] = [];
  for (const option of selectedOptions) {
    parts.push(Buffer.from([SELECTED_OPTIONS_TAG]), encodeVarint(option.length), option);
  }
  return Buffer.concat(parts);
}

export function decodePollVoteMessage(bytes: Buffer): Buffer[] {
  const selected: Buffer[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const [tag, afterTag] = decodeVarint(bytes, offset);
    const wireType = tag & 7;
    offset = afterTag;
    if (wireType === 2) {
      const [length, afterLength] = decodeVarint(bytes, offset);
      const end = afterLength + length;
      if (end > bytes.length) throw new Error('poll vote message is truncated');
      if (tag >>> 3 === 1) selected.push(bytes.subarray(afterLength, end));
      offset = end;
    } else if (wireType === 0) {
      offset = decodeVarint(bytes, offset)[1];
    } else if (wireType === 1 || wireType === 5) {
      offset += wireType === 1 ? 8 : 4;
    } else {
      throw new Error(`poll vote message has an unsupported wire type ${wireType}`);
    }
  }
  return selected;
}

function encodeVarint(value: number): Buffer {
  const bytes: number[] = [];
  let remaining = value;
  while (remaining > 0x7f) {
    bytes.push((remaining & 0x7f) | 0x80);
    remaining >>>= 7;
  }
  bytes.push(remaining);
  return Buffer.from(bytes);
}

function decodeVarint(bytes: Buffer, start: number): [number, number] {
  let value = 0;
  let shift = 0;
  let offset = start;
  for (;;) {
    const byte = bytes[offset];
    if (byte === undefined) throw new Error('poll vote message is truncated');
    value += (byte & 0x7f) * 2 ** shift;
    offset += 1;
    if ((byte & 0x80) === 0) return [value, offset];
    shift += 7;
    if (shift > 35) throw new Error('poll vote message has an oversized varint');
  }
}
