/**
 * Tone adaptation (specification §Tone): a fixed whitelist of tone tags, validation of the model's proposals, EMA
 * smoothing with hysteresis, mutual exclusion, and the `<TONE POLICY>` block injected into prompts. Everything here is
 * pure. The
 * parts: `tone-tags.ts` (the whitelist and validation), `tone-update.ts` (one update), `tone-guide.ts` (the block).
 */
export * from './tone-guide.ts';
export * from './tone-tags.ts';
export * from './tone-update.ts';
