import type { Kysely } from 'kysely';

/**
 * The participant's language (BCP 47 tag). Participants enrolled before it were spoken to in English, so existing
 * rows get `en`; new participants get `DEFAULT_LANGUAGE` from the participant service.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('participants')
    .addColumn('language', 'text', (column) => column.notNull().defaultTo('en'))
    .execute();
}
