/**
 * A poll vote as the voter's phone encrypts it (the fake WhatsApp and the tests send real votes; the channel decrypts
 * them with Baileys' `decryptPollVote`):
 *
 *   sign   = pollMessageId ‖ pollCreatorJid ‖ voterJid ‖ "Poll Vote" ‖ 0x01
 *   key0   = HMAC-SHA256(key = 32 zero bytes, data = messageSecret)
 *   key    = HMAC-SHA256(key = key0, data = sign)
 *   aad    = pollMessageId ‖ 0x00 ‖ voterJid
 *   encPayload = AES-256-GCM(PollVoteMessage { selectedOptions: SHA-256 of each option }) ‖ 16-byte tag, 12-byte encIv
 */
import { createCipheriv, createHmac, randomBytes } from 'node:crypto';
import { proto } from '@whiskeysockets/baileys';
import { pollOptionHash } from '../../src/channels/whatsapp-web/poll-option-hash.ts';
import type { PollVoteContext } from '../../src/channels/whatsapp-web/whatsapp-socket.ts';

export interface EncryptedPollVote {
  encPayload: Uint8Array;
  encIv: Uint8Array;
}

export function encryptPollVote(selectedOptions: string[], context: PollVoteContext): EncryptedPollVote {
  const sign = Buffer.concat([
    Buffer.from(context.pollMessageId),
    Buffer.from(context.pollCreatorJid),
    Buffer.from(context.voterJid),
    Buffer.from('Poll Vote'),
    Buffer.from([1]),
  ]);
  const key0 = createHmac('sha256', Buffer.alloc(32)).update(context.messageSecret).digest();
  const key = createHmac('sha256', key0).update(sign).digest();
  const encIv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, encIv);
  cipher.setAAD(Buffer.from(`${context.pollMessageId}\u0000${context.voterJid}`));
  const plain = proto.Message.PollVoteMessage.encode({ selectedOptions: selectedOptions.map(pollOptionHash) }).finish();
  return { encPayload: Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]), encIv };
}
