/**
 * The structure of src/ (issue 33, "Done when"): no file-level or folder-level import cycle, no import from a lower
 * layer into a higher one (layers.ts, docs/architecture.md), no file over 300 lines, main.ts under 150. What remains
 * is listed, named, in known-violations.ts: a new violation fails, and so does a listed one that is gone.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  cycles,
  folderImports,
  type ImportGraph,
  layerOf,
  layerViolations,
  lineCount,
  readImportGraph,
} from './import-graph.ts';
import {
  KNOWN_FILE_CYCLES,
  KNOWN_FOLDER_CYCLES,
  KNOWN_LAYER_VIOLATIONS,
  KNOWN_LONG_FILES,
} from './known-violations.ts';

const MAX_LINES = 300;
const MAX_MAIN_LINES = 150;

let graph: ImportGraph;
beforeAll(async () => {
  graph = await readImportGraph();
}, 120_000);

/** What was found against what is listed: both differences must be empty. */
function compare(found: readonly string[], known: readonly string[]): { unlisted: string[]; gone: string[] } {
  return {
    unlisted: found.filter((item) => !known.includes(item)).sort(),
    gone: known.filter((item) => !found.includes(item)).sort(),
  };
}

describe('the structure of src/', () => {
  it('reads the whole source tree', () => {
    expect(graph.files).toContain('src/main.ts');
    expect(graph.files.length).toBeGreaterThan(100);
    for (const file of graph.files) expect(layerOf(file), `${file} belongs to no layer (layers.ts)`).toBeDefined();
  });

  it('has no file-level import cycle beyond the known ones', () => {
    const found = cycles(graph.imports);
    // dependency-cruiser's `circular` rule and the components agree: each flagged import lies inside a component,
    // and each component has one flagged (dependency-cruiser names a circle once, not every import in it).
    const flagged = graph.violations.filter((v) => v.rule === 'no-cycle');
    const inSameComponent = (from: string, to: string) => found.some((c) => c.includes(from) && c.includes(to));
    for (const { from, to } of flagged) expect(inSameComponent(from, to), `${from} → ${to}`).toBe(true);
    for (const component of found) expect(flagged.some(({ from }) => component.includes(from))).toBe(true);
    expect(
      compare(
        found.map((members) => members.join(' ↔ ')),
        KNOWN_FILE_CYCLES,
      ),
    ).toEqual({ unlisted: [], gone: [] });
  });

  it('has no folder-level import cycle beyond the known ones', () => {
    const found = cycles(folderImports(graph)).map((members) => members.join(' ↔ '));
    expect(compare(found, KNOWN_FOLDER_CYCLES)).toEqual({ unlisted: [], gone: [] });
  });

  it('imports only from its own layer or lower ones, beyond the known exceptions', () => {
    const found = layerViolations(graph);
    const { unlisted, gone } = compare([...found.keys()], KNOWN_LAYER_VIOLATIONS);
    expect({ unlisted: unlisted.map((pair) => `${pair} (${found.get(pair)})`), gone }).toEqual({
      unlisted: [],
      gone: [],
    });
  });

  it('keeps every file under 300 lines, beyond the known ones, and main.ts under 150', () => {
    const long = graph.files.filter((file) => lineCount(file) > MAX_LINES);
    expect(compare(long, KNOWN_LONG_FILES)).toEqual({ unlisted: [], gone: [] });
    expect(lineCount('src/main.ts')).toBeLessThan(MAX_MAIN_LINES);
  });
});
