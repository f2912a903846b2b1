/**
 * Reads a table page by page in id order (keyset paging): `fetch(after, limit)` returns up to `limit` rows with ids
 * greater than `after`, and the next page starts after the last id seen. Ends at the first short page, so memory
 * stays one page whatever the table's size. Yields whole pages, for callers that look up something per page.
 */
export async function* keysetPages<Row extends { id: Id }, Id>(
  fetch: (after: Id | undefined, limit: number) => Promise<Row[]>,
  limit: number,
): AsyncGenerator<Row[]> {
  let after: Id | undefined;
  for (;;) {
    const page = await fetch(after, limit);
    if (page.length > 0) yield page;
    if (page.length < limit) return;
    after = page.at(-1)?.id;
  }
}
