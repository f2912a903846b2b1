import { keysetPages } from '../../../store/keyset-pages.ts';
import {
  EXPORT_PAGE_SIZE,
  type ExportColumn,
  type ExportContext,
  type ExportRow,
  type ExportTable,
  type ExportTableName,
} from '../export-types.ts';
import { rowFilter } from '../row-filter.ts';

/**
 * A table read in keyset pages, one row per item: its file states the columns, the page query and the mapping, and
 * `keysetTable` does the walk every such table shares (pages in key order, the export filter, the mapping).
 */
export interface KeysetTableSpec<Item, Key, PageData> {
  name: ExportTableName;
  description: string;
  columns: readonly ExportColumn[];
  /** Up to `limit` items whose key is greater than `after`, in key order. */
  page(context: ExportContext, after: Key | undefined, limit: number): Promise<Item[]>;
  /** The item's key: the next page starts after the last item's. */
  key(item: Item): Key;
  /**
   * The participant and time the export filter checks, for a query that does not filter by them itself (an item
   * without a participant is left out when participants are named; without a time, it is not filtered by time).
   */
  filterBy?(item: Item): [participantId: string | null | undefined, at?: Date];
  /** What a page's rows look up together: one query per page rather than one per row. */
  pageData?(context: ExportContext, page: readonly Item[]): Promise<PageData>;
  row(item: Item, context: ExportContext, pageData: PageData): ExportRow | Promise<ExportRow>;
}

export function keysetTable<Item, Key, PageData = undefined>(spec: KeysetTableSpec<Item, Key, PageData>): ExportTable {
  return {
    name: spec.name,
    description: spec.description,
    columns: spec.columns,
    async *rows(context) {
      const keeps = rowFilter(context.filter);
      const pages = keysetPages(async (after: Key | undefined, limit) => {
        const items = await spec.page(context, after, limit);
        return items.map((item) => ({ id: spec.key(item), item }));
      }, EXPORT_PAGE_SIZE);
      for await (const keyed of pages) {
        const page = keyed.map(({ item }) => item);
        const pageData = spec.pageData ? await spec.pageData(context, page) : (undefined as PageData);
        for (const item of page) {
          if (spec.filterBy && !keeps(...spec.filterBy(item))) continue;
          yield await spec.row(item, context, pageData);
        }
      }
    },
  };
}
