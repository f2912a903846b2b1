import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './server-process.ts';

/** The first ```yaml block of the README's "Running a trial" section: the example design the tests load. */
export function readmeExampleDesign(): string {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Running a trial'));
  const match = /```yaml\n([\s\S]*?)```/.exec(section);
  if (!match?.[1]) throw new Error('README has no yaml block under "Running a trial"');
  return match[1];
}
