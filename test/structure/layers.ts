/**
 * The layers of src/, lowest first (docs/architecture.md, "Layers"). A file may import files of its own layer and of
 * the layers below it, never above. Paths are dependency-cruiser path patterns (regular expressions on `src/…`).
 */
export const LAYERS: readonly { name: string; paths: string[] }[] = [
  // Pure types and functions: no I/O, imports nothing else of ours.
  { name: 'domain', paths: ['^src/domain/'] },
  // What every layer may use: the settings, the log and metrics, the message catalogues, the outbound HTTP client.
  { name: 'ground', paths: ['^src/config[.]ts$', '^src/config/', '^src/i18n/', '^src/observability/', '^src/http/'] },
  // One conversation turn and time: the engine, its tools, the job runner and timers, the model port and adapters,
  // trials; and the storage port (the files directly in store/: the Store interface, the participant lock, caches; and
  // store/ports/: the repositories per consumer).
  {
    name: 'core',
    paths: [
      '^src/engine/',
      '^src/tools/',
      '^src/scheduling/',
      '^src/llm/',
      '^src/trials/',
      '^src/store/[^/]+$',
      '^src/store/ports/',
    ],
  },
  // The adapters (store/sqlite, postgres, kysely, migrations; the channels) and the services over the core that the
  // API, the dashboard, the channels and the CLI share: the inbound pipeline, participants, safety, research, staff,
  // the original PromptPipe.
  {
    name: 'services',
    paths: [
      '^src/store/(?!ports/).+/',
      '^src/channels/',
      '^src/inbound/',
      '^src/participants/',
      '^src/safety/',
      '^src/research/',
      '^src/staff/',
      '^src/original/',
    ],
  },
  // HTTP: the API routes and the dashboard.
  { name: 'http', paths: ['^src/api/', '^src/web/'] },
  // The composition root and its wiring modules: the only place adapters are chosen and connected.
  { name: 'composition', paths: ['^src/main[.]ts$', '^src/wiring/'] },
  // Programs over the composition root: the CLI, and the evaluation (it runs the real application on the manual clock).
  { name: 'programs', paths: ['^src/cli/', '^src/evaluation/'] },
];

/** The layer a file belongs to, by the first pattern it matches. */
export function layerOf(file: string): string | undefined {
  return LAYERS.find((layer) => layer.paths.some((path) => new RegExp(path).test(file)))?.name;
}

/**
 * The folder a file counts in for folder-level cycles: its first folder under src/ (`src/store/sqlite/x.ts` →
 * `store`); `main.ts` counts with `wiring`, `config.ts` with `config`.
 */
export function unitOf(file: string): string {
  const match = /^src\/([^/]+)\//.exec(file);
  if (match?.[1]) return match[1];
  if (file === 'src/main.ts') return 'wiring';
  return file.replace(/^src\//, '').replace(/[.]ts$/, '');
}
