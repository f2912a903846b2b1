/**
 * Rating `promptpipe eval` runs on the dashboard: `GET /dashboard/evaluations` (the runs in `EVAL_REPORTS_DIR`),
 * `GET /dashboard/evaluations/:run` (its conversations and the judge–human agreement so far) and
 * `GET /dashboard/evaluations/:run/:configuration/:conversation` (read), and `POST …/ratings` (write, like the study's
 * rating). Ratings are stored in the study database under `eval:<run>:<configuration>/<persona>.<repeat>`, a coach
 * turn by its line number in the run's transcript, with the run's own rubric.
 */
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../domain/clock.ts';
import { AppError } from '../domain/errors.ts';
import { type NewId, randomId } from '../domain/ids.ts';
import { evalConversation, parseEvalConversation } from '../research/ratings/eval-conversation.ts';
import { humanRatingsOfRun, judgeHumanAgreement } from '../research/ratings/human-agreement.ts';
import { findRunReport, listRunReports, type RunReport } from '../research/ratings/report-reader.ts';
import type { Rating } from '../store/ratings-records.ts';
import type { Store } from '../store/store.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import {
  conversationPath,
  evaluationConversationPage,
  evaluationRunPage,
  evaluationsPage,
} from './eval-rating-page.ts';
import type { DashboardAction } from './participant-action-routes.ts';
import { raterOf, ratingsFromForm } from './rating-routes.ts';

interface ConversationParams {
  run: string;
  configuration: string;
  conversation: string;
}

function runOf(reportsDir: string, runId: string): RunReport {
  const report = findRunReport(reportsDir, runId);
  if (!report) throw new AppError('not_found', `no evaluation run ${runId} in ${reportsDir}`);
  return report;
}

function conversationOf(reportsDir: string, params: ConversationParams) {
  const report = runOf(reportsDir, params.run);
  const key = `${params.configuration}/${params.conversation}`;
  const conversation = report.conversations.find((candidate) => candidate.conversation === key);
  if (!conversation) throw new AppError('not_found', `run ${params.run} has no conversation ${key}`);
  return { report, conversation, key: evalConversation(report.run.id, key) };
}

/** The study's ratings of one run, oldest first. */
async function ratingsOfRun(store: Store, runId: string): Promise<Rating[]> {
  const all = await store.ratings.list();
  return all.filter((rating) => parseEvalConversation(rating.conversation)?.runId === runId);
}

export function registerEvalRatingRoutes(
  app: FastifyInstance,
  options: { store: Store; clock: Clock; evalReportsDir?: string | undefined; newId?: NewId },
  kit: DashboardRouteKit,
  action: DashboardAction,
): void {
  const { store } = options;
  const reportsDir = options.evalReportsDir ?? 'eval-report';

  app.get('/dashboard/evaluations', kit.needs('read'), async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const ratingsPerRun = new Map<string, number>();
    for (const rating of await store.ratings.list()) {
      const runId = parseEvalConversation(rating.conversation)?.runId;
      if (runId) ratingsPerRun.set(runId, (ratingsPerRun.get(runId) ?? 0) + 1);
    }
    return kit.sendPage(
      reply,
      evaluationsPage(page, { reportsDir, reports: listRunReports(reportsDir), ratingsPerRun }),
    );
  });

  app.get('/dashboard/evaluations/:run', kit.needs('read'), async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const report = runOf(reportsDir, (request.params as { run: string }).run);
    const ratings = await ratingsOfRun(store, report.run.id);
    const humans = humanRatingsOfRun(
      ratings.map((rating) => ({ ...rating, turn: rating.transcriptEntryId })),
      report.run.id,
    );
    const agreement = judgeHumanAgreement(
      report.rubric,
      (key, criterion) =>
        report.conversations.find((conversation) => conversation.conversation === key)?.scores[criterion]?.score,
      humans,
    );
    return kit.sendPage(reply, evaluationRunPage(page, { report, ratings, agreement }));
  });

  app.get('/dashboard/evaluations/:run/:configuration/:conversation', kit.needs('read'), async (request, reply) => {
    const page = kit.context(request, reply, (request.query as { done?: string }).done);
    if (!page) return reply;
    const { report, conversation, key } = conversationOf(reportsDir, request.params as ConversationParams);
    const ratings = await store.ratings.list({ conversation: key });
    const mayRate = page.staff === undefined || page.staff.permissions.has('write');
    return kit.sendPage(reply, evaluationConversationPage(page, { report, conversation, ratings, mayRate }));
  });

  app.post(
    '/dashboard/evaluations/:run/:configuration/:conversation/ratings',
    kit.needs('write'),
    action(async (form, request) => {
      const { report, conversation, key } = conversationOf(reportsDir, request.params as ConversationParams);
      const coachLines = conversation.lines.flatMap((line, index) => (line.from === 'coach' ? [index + 1] : []));
      const ratings = ratingsFromForm(form, {
        rubric: report.rubric,
        conversation: key,
        turnIds: new Set(coachLines),
        rater: raterOf(request),
        now: options.clock.now(),
        newId: options.newId ?? randomId,
      });
      await store.ratings.add(ratings);
      return `${conversationPath(report.run.id, conversation)}?done=${encodeURIComponent(`Saved ${ratings.length} rating(s)`)}`;
    }),
  );
}
