/**
 * PromptPipe never runs on the original PromptPipe's own PostgreSQL database: both have `jobs` and `flow_states`
 * tables of different shapes, so migrating it would fail halfway or, worse, mix the two. A team that points
 * `DATABASE_DSN` (or `DATABASE_URL`) at it is told what to do instead, before anything is written.
 */
import { AppError } from '../domain/errors.ts';

/** The table only the original has. */
const ORIGINAL_ONLY_TABLE = 'conversation_participants';

export async function refuseOriginalDatabase(connectionString: string): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString });
  let original = false;
  try {
    await client.connect();
    const { rows } = await client.query<{ original: boolean }>('select to_regclass($1) is not null as original', [
      ORIGINAL_ONLY_TABLE,
    ]);
    original = rows[0]?.original === true;
  } catch {
    // Unreachable or refused: opening the store says so in its own words.
    return;
  } finally {
    await client.end().catch(() => undefined);
  }
  if (original) {
    throw new AppError(
      'invalid_input',
      `DATABASE_URL points at the original PromptPipe's database (it has the ${ORIGINAL_ONLY_TABLE} table): ` +
        'PromptPipe needs a database of its own. Create one, set DATABASE_URL to it, and bring the original’s data ' +
        'over with "promptpipe migrate-from-original --from <the original’s DSN>" (docs/migrating.md)',
    );
  }
}
