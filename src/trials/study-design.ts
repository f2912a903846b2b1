/**
 * A randomised trial's design, as declared in the study design file (`STUDY_DESIGN_FILE`): the study's id and seed,
 * its arms and what differs per arm, the allocation method, and the micro-randomised decision points.
 *
 * Glossary:
 * - arm: one condition of the trial; every participant is allocated to exactly one, once, at enrollment.
 * - stratum: the values of the design's strata fields for one participant (`language=es|channel=webhook`); blocks are
 *   kept per stratum so each stratum is balanced on its own.
 * - block: a run of allocations that holds every arm in proportion to its weight, in an order drawn at random.
 * - decision point: a moment at which an option (send / don't send, variant A / B) is drawn for an available
 *   participant; each produces exactly one decision row.
 *
 * Field names are snake_case like the rest of the API; the schema is strict, so a misspelt key is an error rather
 * than a silently ignored setting.
 */
import { z } from 'zod';

const identifier = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1-64 letters, digits, "_", "." or "-", starting alphanumeric');

const nonEmptyText = z.string().trim().min(1, 'must not be empty');

/** Per language (`en`, `es`, `pt-BR`): the texts a static arm sends, in order. */
const textsByLanguage = z.record(z.string(), z.array(nonEmptyText).min(1, 'needs at least one text'));

const dailyPromptSchema = z.discriminatedUnion('mode', [
  /** Today's behaviour: the model writes the day's prompt from the participant's profile. */
  z.strictObject({ mode: z.literal('personalised') }),
  /** The usual "static control" arm: a fixed text from the list, no generation call. */
  z.strictObject({
    mode: z.literal('static'),
    order: z.enum(['rotate', 'random']).default('rotate'),
    texts: textsByLanguage.refine((texts) => 'en' in texts, 'needs the English ("en") list: the fallback language'),
  }),
  /** An assessment-only control arm: no daily prompt; the Done poll alone at the prompt time when `done_poll`. */
  z.strictObject({ mode: z.literal('none'), done_poll: z.boolean().default(false) }),
]);

/**
 * What an arm may switch off (all on by default, as without a design): tone adaptation (the tone tags are then neither
 * updated nor used) and the timers.
 */
const featuresSchema = z.strictObject({
  tone_adaptation: z.boolean().default(true),
  reminders: z.boolean().default(true),
  auto_feedback: z.boolean().default(true),
  intensity_poll: z.boolean().default(true),
  feedback_followups: z.boolean().default(true),
});

const armSchema = z.strictObject({
  id: identifier,
  label: nonEmptyText,
  weight: z.number().int('must be a whole number').positive('must be positive').default(1),
  daily_prompt: dailyPromptSchema.default({ mode: 'personalised' }),
  /**
   * A directory (relative to the design file) whose `intake.txt`, `feedback.txt`, `prompt-generator.txt` and
   * `<language>/<name>` files replace the defaults for this arm's participants; a prompt it lacks stays the default.
   */
  prompt_dir: nonEmptyText.optional(),
  features: featuresSchema.default({
    tone_adaptation: true,
    reminders: true,
    auto_feedback: true,
    intensity_poll: true,
    feedback_followups: true,
  }),
});

/** Participant fields a stratum may be built from; `import.<column>` names a bulk-import column. */
export const STRATUM_FIELDS = ['language', 'channel', 'gender', 'ethnicity', 'timezone'] as const;
const stratumField = z.union([
  z.enum(STRATUM_FIELDS),
  z.string().regex(/^import\.[A-Za-z0-9_ -]+$/, 'must be a participant field or import.<column>'),
]);

const blockSizes = z.array(z.number().int().positive()).min(1, 'needs at least one block size');

const allocationSchema = z.discriminatedUnion('method', [
  z.strictObject({ method: z.literal('simple') }),
  z.strictObject({
    method: z.literal('permuted_blocks'),
    block_sizes: blockSizes,
    /** Draw each block's size from `block_sizes` (harder to guess the last allocations of a block). */
    random_block_sizes: z.boolean().default(false),
  }),
  z.strictObject({
    method: z.literal('stratified_blocks'),
    block_sizes: blockSizes,
    random_block_sizes: z.boolean().default(false),
    strata: z.array(stratumField).min(1, 'needs at least one field'),
  }),
]);

const localTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be a local time HH:MM');

/** Why a decision point may find a participant unavailable (a decision row is still written, with the reason). */
export const AVAILABILITY_RULES = ['paused', 'withdrawn', 'idle', 'quiet_hours', 'answered_today'] as const;

const probabilities = z
  .record(z.string(), z.number().min(0).max(1))
  .refine((table) => Math.abs(Object.values(table).reduce((sum, value) => sum + value, 0) - 1) < 1e-9, {
    message: 'probabilities must add up to 1',
  });

const decisionPointSchema = z.strictObject({
  id: identifier,
  moment: z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('daily_prompt') }),
    z.strictObject({
      type: z.literal('local_times'),
      times: z.array(localTime).min(1),
      /** Minutes of random delay after each time (0 = exactly at the time). */
      jitter_minutes: z.number().int().min(0).max(720).default(0),
    }),
  ]),
  unavailable_when: z.array(z.enum(AVAILABILITY_RULES)).default([]),
  quiet_hours: z.strictObject({ start: localTime, end: localTime }).optional(),
  options: z.array(identifier).min(2, 'needs at least two options'),
  /** What an option sends, per language (English the fallback); an option without one sends nothing. */
  messages: z.record(z.string(), z.record(z.string(), nonEmptyText)).default({}),
  probabilities: z.strictObject({
    default: probabilities,
    by_arm: z.record(z.string(), probabilities).default({}),
  }),
  proximal_outcome: z
    .discriminatedUnion('type', [
      z.strictObject({ type: z.literal('replied_within'), hours: z.number().positive().max(168) }),
      z.strictObject({ type: z.literal('done_answered'), hours: z.number().positive().max(168).default(24) }),
    ])
    .optional(),
});

export const studyDesignSchema = z
  .strictObject({
    study: z.strictObject({
      id: identifier,
      /** Keys every draw; with the design and the enrollment order, every allocation can be recomputed. */
      seed: z.string().min(8, 'must be at least 8 characters'),
    }),
    arms: z.array(armSchema).min(1, 'needs at least one arm'),
    allocation: allocationSchema.default({ method: 'simple' }),
    decision_points: z.array(decisionPointSchema).default([]),
  })
  .superRefine((design, context) => {
    const armIds = design.arms.map((arm) => arm.id);
    armIds.forEach((id, index) => {
      if (armIds.indexOf(id) !== index) {
        context.addIssue({ code: 'custom', path: ['arms', index, 'id'], message: `duplicate arm id "${id}"` });
      }
    });
    const allocation = design.allocation;
    if (allocation.method !== 'simple') {
      // A block holds each arm in proportion to its weight, so its size must be a multiple of the weights' sum.
      const totalWeight = design.arms.reduce((sum, arm) => sum + arm.weight, 0);
      allocation.block_sizes.forEach((size, index) => {
        if (size % totalWeight !== 0) {
          context.addIssue({
            code: 'custom',
            path: ['allocation', 'block_sizes', index],
            message: `block size ${size} is not a multiple of the arms' total weight ${totalWeight}`,
          });
        }
      });
    }
    design.decision_points.forEach((point, index) => {
      const tables = [
        { path: ['decision_points', index, 'probabilities', 'default'], table: point.probabilities.default },
        ...Object.entries(point.probabilities.by_arm).map(([arm, table]) => ({
          path: ['decision_points', index, 'probabilities', 'by_arm', arm],
          table,
          arm,
        })),
      ];
      for (const entry of tables) {
        const keys = Object.keys(entry.table).sort();
        if (keys.join() !== [...point.options].sort().join()) {
          context.addIssue({
            code: 'custom',
            path: entry.path,
            message: `must give a probability for exactly the options ${point.options.join(', ')}`,
          });
        }
        if ('arm' in entry && !armIds.includes(entry.arm)) {
          context.addIssue({ code: 'custom', path: entry.path, message: `names no arm of the study ("${entry.arm}")` });
        }
      }
      for (const [option, texts] of Object.entries(point.messages)) {
        const path = ['decision_points', index, 'messages', option];
        if (!point.options.includes(option)) context.addIssue({ code: 'custom', path, message: 'is not an option' });
        if (!('en' in texts)) context.addIssue({ code: 'custom', path, message: 'needs the English ("en") text' });
      }
      if (point.unavailable_when.includes('quiet_hours') && !point.quiet_hours) {
        context.addIssue({
          code: 'custom',
          path: ['decision_points', index, 'quiet_hours'],
          message: 'is required when unavailable_when includes quiet_hours',
        });
      }
    });
  });

export type StudyDesign = z.output<typeof studyDesignSchema>;
export type Arm = StudyDesign['arms'][number];
export type AllocationMethod = StudyDesign['allocation'];
export type DecisionPoint = StudyDesign['decision_points'][number];
export type ArmFeatures = Arm['features'];
