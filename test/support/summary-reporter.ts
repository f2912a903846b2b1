import type { Reporter, TestModule } from 'vitest/node';

/** Prints the final `N passed, N failed` line that CI reads. Skipped tests are reported separately. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const testModule of testModules) {
      if (testModule.state() === 'failed' && [...testModule.children.allTests()].length === 0) failed += 1;
      for (const testCase of testModule.children.allTests()) {
        const state = testCase.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
    }
    failed += unhandledErrors.length;
    const skippedNote = skipped > 0 ? ` (${skipped} skipped)` : '';
    process.stdout.write(`\n${passed} passed, ${failed} failed${skippedNote}\n`);
  }
}
