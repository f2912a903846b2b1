/**
 * A stratified trial on bulk-import columns: the CSV reader accepts the columns the design names (`import.site`),
 * refuses them without a design that names them, and the import allocates each row in its stratum.
 */
import { describe, expect, it } from 'vitest';
import { sequentialIds } from '../../src/domain/ids.ts';
import { readCsvImport } from '../../src/research/import/import-input.ts';
import { createImportService } from '../../src/research/import/import-service.ts';
import { createManualClock } from '../../src/scheduling/clock.ts';
import { importColumnsOf } from '../../src/trials/allocation-sequence.ts';
import { createTrialFixture, designOf, TRIAL_START } from './trial-fixture.ts';

const design = designOf(`
study: { id: import-strata, seed: "import-strata-seed" }
arms: [{ id: a, label: A }, { id: b, label: B }]
allocation: { method: stratified_blocks, block_sizes: [2], strata: [import.Site, language] }
`);

const csv = new TextEncoder().encode(
  ['phone_number,language,Site', '+15550003001,en,North', '+15550003002,es,south', '+15550003003,en,north'].join('\n'),
);

describe('strata from bulk-import columns', () => {
  it('reads the design’s columns and allocates each row in its stratum', async () => {
    const { store, participants } = await createTrialFixture(design);
    const extraColumns = importColumnsOf(design.design);
    expect(extraColumns).toEqual(['site']);
    const imports = createImportService({
      store,
      participants,
      clock: createManualClock(TRIAL_START),
      newId: sequentialIds(),
      defaultCountry: 'US',
      channels: ['webhook'],
      greetingRatePerMinute: 30,
      extraColumns,
    });
    const outcome = await imports.run(readCsvImport(csv, { extraColumns: imports.extraColumns }), {});
    expect(outcome.enrolled).toHaveLength(3);
    const allocations = await store.allocations.list('import-strata');
    expect(allocations.map((row) => row.stratum).sort()).toEqual([
      'import.Site=north|language=en',
      'import.Site=north|language=en',
      'import.Site=south|language=es',
    ]);
    // The two in one stratum fill its first block of two: one each.
    const north = allocations.filter((row) => row.stratum.startsWith('import.Site=north'));
    expect(north.map((row) => row.armId).sort()).toEqual(['a', 'b']);
    await store.close();
  });

  it('refuses a column no design names, saying which columns it expects', () => {
    expect(() => readCsvImport(csv)).toThrow(/unknown column\(s\) "site"/);
  });
});
