import type { Reporter, TestModule } from 'vitest/node';

/** Prints the final `N passed, N failed` line that CI reads. Skipped tests are reported separately. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const testModule of testModules) {
      let failedInModule = 0;
      for (const testCase of testModule.children.allTests()) {
        const state = testCase.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failedInModule += 1;
        else skipped += 1;
      }
      // A module can fail with no failed test: an import error, or a failing beforeAll/afterAll hook. Count it.
      if (testModule.state() === 'failed' && failedInModule === 0) failedInModule = 1;
      failed += failedInModule;
    }
    failed += unhandledErrors.length;
    const skippedNote = skipped > 0 ? ` (${skipped} skipped)` : '';
    process.stdout.write(`\n${passed} passed, ${failed} failed${skippedNote}\n`);
  }
}
