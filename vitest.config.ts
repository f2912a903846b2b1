import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // A developer's .env (a token, a model) must not change what the tests see: no settings file in this process;
    // the servers the tests spawn get the same variable (test/support/server-process.ts).
    env: { PROMPTPIPE_ENV_FILE: '' },
  },
});
