import type { Kysely, Selectable } from 'kysely';
import type { WhatsAppMessageRepository, WhatsAppPollRecord, WhatsAppSentMessage } from '../ports/whatsapp-auth.ts';
import { fromOptionalJson, fromTimestamp, optionalField, toOptionalJson, toTimestamp } from './column-codecs.ts';
import type { Database, WhatsAppMessagesTable } from './database.ts';

function fromRow(row: Selectable<WhatsAppMessagesTable>): WhatsAppSentMessage {
  return {
    providerMessageId: row.provider_message_id,
    session: row.session,
    outboundId: row.outbound_id,
    participantId: row.participant_id,
    remoteJid: row.remote_jid,
    kind: row.kind === 'poll' ? 'poll' : 'text',
    ...optionalField('poll', fromOptionalJson<WhatsAppPollRecord>(row.poll)),
    createdAt: fromTimestamp(row.created_at),
  };
}

export function createWhatsAppMessageRepository(db: Kysely<Database>): WhatsAppMessageRepository {
  return {
    async record(message) {
      await db
        .insertInto('whatsapp_messages')
        .values({
          provider_message_id: message.providerMessageId,
          session: message.session,
          outbound_id: message.outboundId,
          participant_id: message.participantId,
          remote_jid: message.remoteJid,
          kind: message.kind,
          poll: toOptionalJson(message.poll),
          created_at: toTimestamp(message.createdAt),
        })
        .onConflict((conflict) => conflict.column('provider_message_id').doNothing())
        .execute();
    },
    async get(providerMessageId) {
      const row = await db
        .selectFrom('whatsapp_messages')
        .selectAll()
        .where('provider_message_id', '=', providerMessageId)
        .executeTakeFirst();
      return row ? fromRow(row) : undefined;
    },
    async getByOutboundId(outboundId) {
      const row = await db
        .selectFrom('whatsapp_messages')
        .selectAll()
        .where('outbound_id', '=', outboundId)
        .orderBy('created_at', 'asc')
        .executeTakeFirst();
      return row ? fromRow(row) : undefined;
    },
  };
}
