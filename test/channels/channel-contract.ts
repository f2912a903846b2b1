/**
 * The channel port's contract, run against every adapter (channel-contract.test.ts). A fixture gives the adapter
 * wired to a fake of its provider; the inbound side (where the channel has one) goes through the real HTTP routes of
 * an API harness. Cases a channel cannot have are listed in `notApplicable` with the reason, and reported as skipped
 * with that reason in their name.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Channel,
  DeliveryDeferredError,
  type OutboundMessage,
  PermanentDeliveryError,
  RecipientOptedOutError,
} from '../../src/channels/channel.ts';
import type { ApiHarness } from '../support/api-harness.ts';
import { WINDOW_CONTRACT_CASES, type WindowContractCase, windowContractCases } from './channel-window-contract.ts';

export type ContractCase =
  | 'send text'
  | 'send poll'
  | 'inbound text'
  | 'inbound poll answer'
  | 'duplicate inbound'
  | 'bad signature'
  | 'receipt'
  | 'permanent failure'
  | 'retryable failure'
  | 'rate limited'
  | 'recipient blocked'
  | WindowContractCase;

/** The wait a fixture's provider names in its rate-limit answer (`failNext('rate-limited')`). */
export const CONTRACT_RETRY_AFTER_SECONDS = 7;

export interface ChannelContractFixture {
  channel: Channel;
  /**
   * What reached the provider, in order: recipient and visible text (poll options when sent natively, or as a
   * template's quick-reply buttons); a template message names its template, its text being the body variable.
   */
  delivered(): { to: string; text: string; options?: string[]; template?: string }[];
  /**
   * The next send fails as the provider would: permanently (4xx), retryably (5xx / 429), rate-limited with a wait of
   * {@link CONTRACT_RETRY_AFTER_SECONDS}, or because the participant blocked the sender.
   */
  failNext?(kind: 'permanent' | 'retryable' | 'rate-limited' | 'blocked'): void;
  inbound?: {
    harness: ApiHarness;
    /** Status code of the provider's webhook request carrying this message (correctly signed unless told). */
    postText(from: string, text: string, providerId: string, options?: { badSignature?: boolean }): Promise<number>;
    postPollAnswer(from: string, pollId: string, index: number, option: string, providerId: string): Promise<number>;
    postReceipt(providerMessageId: string, status: 'delivered'): Promise<number>;
  };
  /** Adapters with a 24-hour window (`channel.templateWindow`): its cases (channel-window-contract.ts). */
  window?: {
    /** From now on, the participant has not written in 25 hours. */
    close(): void;
    /** Its provider routes record receipts through the window re-send (`withWindowResend`). */
    harness: ApiHarness;
    /** Status code of the provider's receipt saying this message failed for being outside the window. */
    postWindowFailure(providerMessageId: string): Promise<number>;
  };
  close(): Promise<void>;
}

const PHONE = '+15551230001';

function outbound(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  return { id: 'out_c1', participantId: 'p_1', to: PHONE, kind: 'text', text: 'Time for your walk', ...overrides };
}

export function describeChannelContract(
  name: string,
  createFixture: () => Promise<ChannelContractFixture>,
  notApplicable: Partial<Record<ContractCase, string>> = {},
  capabilities: { templateWindow?: boolean } = {},
): void {
  describe(`channel contract: ${name}`, () => {
    let fixture: ChannelContractFixture | undefined;
    afterEach(async () => {
      await fixture?.close();
      fixture = undefined;
    });
    async function setUp(): Promise<ChannelContractFixture> {
      fixture = await createFixture();
      return fixture;
    }
    function contractCase(title: ContractCase, body: () => Promise<void>): void {
      const reason = notApplicable[title];
      if (reason) it.skip(`${title} (not applicable: ${reason})`, body);
      else it(title, body);
    }

    contractCase('send text', async () => {
      const f = await setUp();
      await f.channel.send(outbound());
      const delivered = f.delivered();
      expect(delivered).toHaveLength(1);
      expect(delivered[0]?.to).toBe(PHONE);
      expect(delivered[0]?.text).toContain('Time for your walk');
    });

    contractCase('send poll', async () => {
      const f = await setUp();
      await f.channel.send(
        outbound({
          kind: 'poll',
          text: f.channel.supportsPolls ? 'Did you do it?' : 'Did you do it?\nReply 1 for Done, 2 for Next time',
          poll: { id: 'poll_c1', question: 'Did you do it?', options: ['Done', 'Next time'] },
        }),
      );
      const [sent] = f.delivered();
      expect(sent?.text).toContain('Did you do it?');
      if (f.channel.supportsPolls) expect(sent?.options).toEqual(['Done', 'Next time']);
      else expect(sent?.text).toContain('Reply 1 for Done, 2 for Next time');
    });

    contractCase('inbound text', async () => {
      const f = await setUp();
      const inbound = f.inbound;
      if (!inbound) throw new Error('fixture has no inbound side');
      const ada = await inbound.harness.enroll(PHONE);
      expect(await inbound.postText(PHONE, 'Hello coach', 'prov-1')).toBeLessThan(300);
      await inbound.harness.inbound.idle();
      expect(inbound.harness.flow.messages).toEqual([
        expect.objectContaining({ participantId: ada.id, text: 'Hello coach' }),
      ]);
    });

    contractCase('inbound poll answer', async () => {
      const f = await setUp();
      const inbound = f.inbound;
      if (!inbound) throw new Error('fixture has no inbound side');
      await inbound.harness.enroll(PHONE);
      expect(await inbound.postPollAnswer(PHONE, 'poll_c1', 0, 'Done', 'prov-2')).toBeLessThan(300);
      await inbound.harness.inbound.idle();
      expect(inbound.harness.flow.messages.at(-1)?.pollAnswer).toMatchObject({ option: 'Done' });
    });

    contractCase('duplicate inbound', async () => {
      const f = await setUp();
      const inbound = f.inbound;
      if (!inbound) throw new Error('fixture has no inbound side');
      await inbound.harness.enroll(PHONE);
      expect(await inbound.postText(PHONE, 'once', 'prov-3')).toBeLessThan(300);
      expect(await inbound.postText(PHONE, 'once', 'prov-3')).toBeLessThan(300);
      await inbound.harness.inbound.idle();
      expect(inbound.harness.flow.messages).toHaveLength(1);
    });

    contractCase('bad signature', async () => {
      const f = await setUp();
      const inbound = f.inbound;
      if (!inbound) throw new Error('fixture has no inbound side');
      await inbound.harness.enroll(PHONE);
      const status = await inbound.postText(PHONE, 'forged', 'prov-4', { badSignature: true });
      expect([401, 403]).toContain(status);
      await inbound.harness.inbound.idle();
      expect(inbound.harness.flow.messages).toEqual([]);
    });

    contractCase('receipt', async () => {
      const f = await setUp();
      const inbound = f.inbound;
      if (!inbound) throw new Error('fixture has no inbound side');
      const ada = await inbound.harness.enroll(PHONE);
      const result = await f.channel.send(outbound({ participantId: ada.id }));
      expect(result.providerMessageId).toBeTruthy();
      await inbound.harness.store.deliveries.record({
        outboundId: 'out_c1',
        participantId: ada.id,
        channel: f.channel.name,
        providerMessageId: result.providerMessageId ?? '',
        status: 'sent',
        createdAt: new Date(),
      });
      expect(await inbound.postReceipt(result.providerMessageId ?? '', 'delivered')).toBeLessThan(300);
      const records = await inbound.harness.store.deliveries.listFor('out_c1');
      expect(records.map((record) => record.status)).toEqual(['sent', 'delivered']);
    });

    contractCase('permanent failure', async () => {
      const f = await setUp();
      f.failNext?.('permanent');
      await expect(f.channel.send(outbound())).rejects.toBeInstanceOf(PermanentDeliveryError);
    });

    for (const title of WINDOW_CONTRACT_CASES) {
      const reason =
        notApplicable[title] ??
        (capabilities.templateWindow ? undefined : 'no 24-hour window: every message may be sent free-form');
      if (reason) it.skip(`${title} (not applicable: ${reason})`, () => windowContractCases[title](setUp));
      else it(title, () => windowContractCases[title](setUp));
    }

    contractCase('retryable failure', async () => {
      const f = await setUp();
      f.failNext?.('retryable');
      const error = await f.channel.send(outbound()).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Error);
      expect(error).not.toBeInstanceOf(PermanentDeliveryError);
    });

    contractCase('rate limited', async () => {
      const f = await setUp();
      f.failNext?.('rate-limited');
      const error = await f.channel.send(outbound()).catch((caught: unknown) => caught);
      // The provider named its wait: the delivery waits that long (no attempt spent) instead of failing.
      expect(error).toBeInstanceOf(DeliveryDeferredError);
      expect((error as DeliveryDeferredError).deliveryHoldMs).toBe(CONTRACT_RETRY_AFTER_SECONDS * 1000);
    });

    contractCase('recipient blocked', async () => {
      const f = await setUp();
      f.failNext?.('blocked');
      // Not only permanent: the outbox withdraws the participant, as STOP would.
      await expect(f.channel.send(outbound())).rejects.toBeInstanceOf(RecipientOptedOutError);
    });
  });
}
