/**
 * Poll votes as WhatsApp encrypts them, decrypted by the socket with Baileys' `decryptPollVote`
 * (`decryptBaileysPollVote`). The vote is built in this test from the scheme's steps, with Baileys' protobuf for the
 * `PollVoteMessage`; the test helper the fake WhatsApp encrypts with (test/support/poll-vote-encryption.ts) is
 * checked against the same decryption.
 */
import { createCipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { proto } from '@whiskeysockets/baileys';
import { describe, expect, it } from 'vitest';
import { decryptBaileysPollVote as decryptPollVote } from '../../../src/channels/whatsapp-web/baileys-socket.ts';
import { pollOptionHash, selectedOptionNames } from '../../../src/channels/whatsapp-web/poll-option-hash.ts';
import type { PollVoteContext } from '../../../src/channels/whatsapp-web/whatsapp-socket.ts';
import { DONE_POLL, intensityPollOptions } from '../../../src/domain/polls.ts';
import { encryptPollVote } from '../../support/poll-vote-encryption.ts';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** A voter's phone: what it sends in `pollUpdateMessage.vote`. */
function voteLikeWhatsApp(option: string, context: PollVoteContext) {
  const sign = Buffer.concat([
    Buffer.from(context.pollMessageId),
    Buffer.from(context.pollCreatorJid),
    Buffer.from(context.voterJid),
    Buffer.from('Poll Vote'),
    Buffer.from([1]),
  ]);
  const key0 = createHmac('sha256', new Uint8Array(32)).update(context.messageSecret).digest();
  const key = createHmac('sha256', key0).update(sign).digest();
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(`${context.pollMessageId}\u0000${context.voterJid}`));
  const plain = proto.Message.PollVoteMessage.encode({ selectedOptions: [sha256(option)] }).finish();
  return { encPayload: Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]), encIv: iv };
}

function makeContext(overrides: Partial<PollVoteContext> = {}): PollVoteContext {
  return {
    pollMessageId: '3EB0C767D82B1A2F4E11',
    pollCreatorJid: '15550009999@s.whatsapp.net',
    voterJid: '15550000001@s.whatsapp.net',
    messageSecret: randomBytes(32),
    ...overrides,
  };
}

describe('poll vote decryption', () => {
  const polls = [
    { name: 'the Done poll', options: [...DONE_POLL.options] },
    { name: 'the intensity poll', options: intensityPollOptions('normal') },
  ];

  for (const poll of polls) {
    for (const option of poll.options) {
      it(`decrypts a vote for "${option}" in ${poll.name}`, () => {
        const context = makeContext();
        const vote = voteLikeWhatsApp(option, context);
        expect(selectedOptionNames(decryptPollVote(vote, context), poll.options)).toEqual([option]);
      });
    }
  }

  it('refuses a vote decrypted with the wrong secret, voter or poll id (the tag does not verify)', () => {
    const context = makeContext();
    const vote = voteLikeWhatsApp('Done', context);
    expect(() => decryptPollVote(vote, { ...context, messageSecret: randomBytes(32) })).toThrow();
    expect(() => decryptPollVote(vote, { ...context, voterJid: '15550000002@s.whatsapp.net' })).toThrow();
    expect(() => decryptPollVote(vote, { ...context, pollMessageId: 'OTHER' })).toThrow();
    expect(() => decryptPollVote({ encPayload: Buffer.alloc(4), encIv: vote.encIv }, context)).toThrow();
  });

  it('the test helper encrypts votes that Baileys decrypts to the same option hashes', () => {
    const context = makeContext({ voterJid: '123456789012345@lid' });
    const vote = encryptPollVote(['Increase'], context);
    const decoded = decryptPollVote({ encPayload: vote.encPayload, encIv: vote.encIv }, context);
    expect(decoded.map((hash) => Buffer.from(hash).toString('hex'))).toEqual([
      pollOptionHash('Increase').toString('hex'),
    ]);
    expect(selectedOptionNames(decryptPollVote(encryptPollVote([], context), context), DONE_POLL.options)).toEqual([]);
  });

  it('maps hashes to the poll options they name, ignoring unknown ones', () => {
    const options = intensityPollOptions('low');
    expect(selectedOptionNames([sha256('Increase'), sha256('Done')], options)).toEqual(['Increase']);
    expect(selectedOptionNames([], options)).toEqual([]);
  });
});
