/**
 * `GET /dashboard/participants/:id/rate` (read) and `POST /dashboard/participants/:id/ratings` (write): staff rate a
 * conversation, or one coach turn, with the evaluation rubric (`eval/rubric.yaml`); the ratings are study data
 * (export table `ratings`) and the evaluation report's human side of the judge–human agreement.
 */
import { join } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import { type NewId, randomId } from '../domain/ids.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import { loadRubric, type Rubric } from '../research/ratings/rubric.ts';
import { type NewRating, participantConversation } from '../store/ratings-records.ts';
import type { Store } from '../store/store.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import type { DashboardAction } from './participant-action-routes.ts';
import { ratingPage } from './rating-page.ts';

/** The rubric the repository ships, beside `prompts/` (the same depth from src/web and from the bundle). */
export const DEFAULT_RUBRIC_FILE = join(import.meta.dirname, '..', '..', 'eval', 'rubric.yaml');

/** The ratings of one submitted form, validated against the rubric; bad input is refused whole. */
export function ratingsFromForm(
  form: Record<string, string>,
  input: {
    rubric: Rubric;
    /** The ratings table's key of what is rated (`participant:<id>`, `eval:<run>:A/ada.1`). */
    conversation: string;
    /** The study participant rated, when it is a study conversation. */
    participantId?: string;
    /** The coach turns that may be rated (transcript entry ids, or an evaluation transcript's line numbers). */
    turnIds: ReadonlySet<number>;
    rater: string;
    now: Date;
    newId: NewId;
  },
): NewRating[] {
  const { rubric } = input;
  const turn = form.turn?.trim() ? Number(form.turn) : undefined;
  if (turn !== undefined && !input.turnIds.has(turn))
    throw new AppError('invalid_input', `turn ${form.turn} is not a coach turn of this conversation`);
  const ratings: NewRating[] = [];
  for (const criterion of rubric.criteria) {
    const text = form[`score_${criterion.id}`]?.trim();
    if (!text) continue;
    const score = Number(text);
    if (!Number.isInteger(score) || score < rubric.scale.min || score > rubric.scale.max) {
      throw new AppError(
        'invalid_input',
        `${criterion.name}: the score must be a whole number from ${rubric.scale.min} to ${rubric.scale.max}`,
      );
    }
    ratings.push({
      id: input.newId('rating'),
      conversation: input.conversation,
      ...(input.participantId !== undefined ? { participantId: input.participantId } : {}),
      ...(turn !== undefined ? { transcriptEntryId: turn } : {}),
      rubric: rubric.name,
      criterion: criterion.id,
      score,
      rater: input.rater,
      ...(form.comment?.trim() ? { comment: form.comment.trim() } : {}),
      createdAt: input.now,
    });
  }
  if (ratings.length === 0) throw new AppError('invalid_input', 'rate at least one criterion');
  return ratings;
}

/** Who rates: the signed-in staff member (staff accounts' access hook); the API token where there is none. */
export function raterOf(request: FastifyRequest): string {
  return request.staffActor?.label ?? 'PROMPTPIPE_API_TOKEN';
}

export function registerRatingRoutes(
  app: FastifyInstance,
  options: { store: Store; participants: ParticipantService; clock: Clock; newId?: NewId; rubricFile?: string },
  kit: DashboardRouteKit,
  action: DashboardAction,
): void {
  const { store, participants } = options;
  let rubric: Rubric | undefined;
  // Read on first use: a deployment without eval/ still starts; only this page says what is missing.
  const currentRubric = (): Rubric => (rubric ??= loadRubric(options.rubricFile ?? DEFAULT_RUBRIC_FILE));

  app.get('/dashboard/participants/:id/rate', kit.needs('read'), async (request, reply) => {
    const flash = (request.query as { done?: string }).done;
    const page = kit.context(request, reply, flash);
    if (!page) return reply;
    const { id } = request.params as { id: string };
    const participant = await participants.get(id);
    const [transcript, ratings] = await Promise.all([
      store.transcript.list(id),
      store.ratings.list({ conversation: participantConversation(id) }),
    ]);
    const mayRate = page.staff === undefined || page.staff.permissions.has('write');
    return kit.sendPage(
      reply,
      ratingPage(page, { participant, transcript, rubric: currentRubric(), ratings, mayRate }),
    );
  });

  app.post(
    '/dashboard/participants/:id/ratings',
    kit.needs('write'),
    action(async (form, request) => {
      const { id } = request.params as { id: string };
      await participants.get(id);
      const transcript = await store.transcript.list(id);
      const turnIds = new Set(transcript.filter((entry) => entry.role === 'assistant').map((entry) => entry.id));
      const now = options.clock.now();
      const ratings = ratingsFromForm(form, {
        rubric: currentRubric(),
        conversation: participantConversation(id),
        participantId: id,
        turnIds,
        rater: raterOf(request),
        now,
        newId: options.newId ?? randomId,
      });
      await store.transaction(async (tx) => {
        await tx.ratings.add(ratings);
        await tx.events.record({
          participantId: id,
          type: 'conversation-rated',
          data: {
            criteria: ratings.map((rating) => rating.criterion),
            transcript_entry_id: ratings[0]?.transcriptEntryId ?? null,
          },
          createdAt: now,
        });
      });
      return `/dashboard/participants/${id}/rate?done=${encodeURIComponent(`Saved ${ratings.length} rating(s)`)}`;
    }),
  );
}
