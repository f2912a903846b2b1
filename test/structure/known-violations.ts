/**
 * The structure violations that remain after phase 1 of the renovation (issue 33), each named. Phase 2 removes them;
 * the structure test fails on any violation not listed here AND on any listed one that no longer exists, so this list
 * only ever shrinks: when a change removes one, delete its line.
 */

/** Files importing each other in a circle (type-only imports count), members sorted, joined by ' ↔ '. */
export const KNOWN_FILE_CYCLES: readonly string[] = [
  // The Store interface names the dashboard's read port, which names Store's row types (store.ts is being split).
  'src/store/dashboard-reads.ts ↔ src/store/store.ts',
];

/** Top folders of src/ importing each other in a circle (main.ts counts with wiring/, config.ts with config/). */
export const KNOWN_FOLDER_CYCLES: readonly string[] = [
  // The two knots named in issue 33 ({tools, engine, scheduling, store, observability, llm, config} and {research,
  // channels, participants, api}), joined into one (config → safety / original, among others); and the knot
  // {evaluation, web, wiring} (the rating pages and the ratings export read the evaluation's runs, and the evaluation
  // runs the whole application), joined to it by research → evaluation.
  'api ↔ channels ↔ config ↔ engine ↔ evaluation ↔ llm ↔ original ↔ participants ↔ research ↔ ' +
    'safety ↔ scheduling ↔ staff ↔ store ↔ tools ↔ trials ↔ web ↔ wiring',
];

/** Imports from a lower layer into a higher one (layers.ts), by folder: 'from → to'. */
export const KNOWN_LAYER_VIOLATIONS: readonly string[] = [
  // The shared manual clock follows PostgreSQL's coordinator (an adapter) directly.
  'scheduling → store',
  // The Telegram link route and the export's decisions table reach into api/ for the response envelope and a route's
  // row shape.
  'channels → api',
  'research → api',
  // The flag-for-staff tool raises an alert through the safety service.
  'tools → safety',
  // The settings of the safety net and the original's default schedule are read by modules outside config/.
  'config → safety',
  'config → original',
  // The rating pages render the evaluation's rubric and runs; the ratings export names evaluation runs.
  'web → evaluation',
  'research → evaluation',
];

/** src files over the line limit. */
export const KNOWN_LONG_FILES: readonly string[] = [
  // Being rewritten by the renovation's other branches (issue 33: the inbound room, the store split, the unit of work,
  // hot SQL).
  'src/channels/inbound-service.ts',
  'src/engine/conversation-flow-service.ts',
  'src/scheduling/daily-prompt-handler.ts',
  'src/scheduling/job-runner-service.ts',
  'src/store/store.ts',
];
