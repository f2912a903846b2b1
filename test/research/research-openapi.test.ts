import { afterAll, beforeAll, expect, it } from 'vitest';
import { startStudyApp } from './study-fixture.ts';

let started: Awaited<ReturnType<typeof startStudyApp>>;
beforeAll(async () => {
  started = await startStudyApp();
});
afterAll(async () => {
  await started.app.stop();
  await started.model.close();
});

it('documents every research endpoint the server serves in /openapi.json', async () => {
  const document = (await started.app.server.inject({ method: 'GET', url: '/openapi.json' })).json();
  const served = started.app.server.printRoutes({ commonPrefix: false });
  const expected: [string, string, string][] = [
    ['/export/{file}', 'get', 'file'],
    ['/conversation/participants/import', 'post', 'import'],
    ['/conversation/broadcasts', 'post', 'broadcasts'],
    ['/conversation/broadcasts/{id}', 'get', 'broadcasts'],
    ['/stats', 'get', 'stats'],
  ];
  for (const [path, method, fragment] of expected) {
    expect(document.paths[path]?.[method], `${method} ${path}`).toBeDefined();
    expect(served).toContain(fragment);
  }
  const file = document.paths['/export/{file}'].get.parameters.find(
    (parameter: { name: string }) => parameter.name === 'file',
  );
  expect(file.in).toBe('path');
  expect(file.schema.enum).toContain('daily_outcomes.jsonl');
});
