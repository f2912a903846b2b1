/**
 * The trial's routes: `GET /study` (the design in force and its hash), `GET /study/allocations` (the allocation
 * report), `GET /study/randomisation` and `POST /study/randomisation/pause|resume` (a staff pause of the draws at
 * decision points, with a reason), `GET /conversation/participants/:id/decisions` and
 * `POST /conversation/participants/:id/arm` (a staff override of the arm, with a reason).
 */
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ok } from '../../http/envelope.ts';
import { envelope, errorResponse } from '../../http/envelope-schemas.ts';
import { setAuditDetail } from '../../staff/audit-trail.ts';
import { decisionJson } from '../../trials/decision-json.ts';
import type { RandomisationPause } from '../../trials/randomisation-pause.ts';
import type { AllocationReport, TrialService } from '../../trials/trial-service.ts';
import { COMMON_ERRORS } from '../openapi.ts';
import { PARTICIPANTS_PATH } from './participant-routes.ts';

const overrideBody = z.strictObject({
  arm: z.string().min(1),
  reason: z.string().trim().min(1, 'must not be empty: an arm override is audited'),
});

const participantParams = z.object({ id: z.string().min(1) });

const reasonBody = z.strictObject({
  reason: z.string().trim().min(1, 'must not be empty: a pause of randomisation is audited').max(1000),
});

const randomisationState = z
  .object({
    paused: z.boolean(),
    changed_at: z.string().nullable(),
    changed_by: z.string().nullable(),
    reason: z.string().nullable(),
  })
  .nullable();

export function randomisationJson(state: RandomisationPause) {
  return {
    paused: state.paused,
    changed_at: state.changedAt?.toISOString() ?? null,
    changed_by: state.by ?? null,
    reason: state.reason ?? null,
  };
}

/** Who the audit trail names: the staff actor once staff accounts resolve one, else the shared API token. */
function actorLabel(request: unknown): string {
  return (request as { staffActor?: { label?: string } }).staffActor?.label ?? 'PROMPTPIPE_API_TOKEN';
}

function reportJson(report: AllocationReport) {
  return {
    study_id: report.studyId,
    design_hash: report.designHash,
    total: report.total,
    overrides: report.overrides,
    arms: report.arms.map((arm) => ({ arm: arm.armId, label: arm.label, in_force: arm.inForce, drawn: arm.drawn })),
    strata: report.strata.map((stratum) => ({
      stratum: stratum.stratum,
      counts: stratum.counts,
      block: stratum.block
        ? {
            index: stratum.block.blockIndex,
            size: stratum.block.blockSize,
            taken: stratum.block.position,
            allocated: stratum.block.allocated,
          }
        : null,
    })),
  };
}

export function createStudyRoutes(options: { trials: TrialService }): FastifyPluginAsync {
  const { trials } = options;
  const tags = ['trial'];
  const unauthorized = { 401: COMMON_ERRORS[401] };
  const studySchema = {
    operationId: 'getStudy',
    tags,
    summary: 'The study design in force (STUDY_DESIGN_FILE) and its SHA-256 hash; both null without a design',
    response: {
      200: envelope('The design', z.object({ design: z.looseObject({}).nullable(), hash: z.string().nullable() })),
      ...unauthorized,
    },
  };
  const allocationsSchema = {
    operationId: 'getAllocationReport',
    tags,
    summary: 'The allocation report: counts per arm and per stratum, each stratum\u2019s block progress',
    response: { 200: envelope('The report; null without a design', z.looseObject({}).nullable()), ...unauthorized },
  };
  const randomisationSchema = {
    operationId: 'getRandomisationState',
    tags,
    summary: 'Whether the draws at decision points are paused by staff, and the last change (who, when, why)',
    response: { 200: envelope('The state; null without a design', randomisationState), ...unauthorized },
  };
  const changeRandomisationSchema = (action: 'pause' | 'resume') => ({
    operationId: action === 'pause' ? 'pauseRandomisation' : 'resumeRandomisation',
    tags,
    summary:
      action === 'pause'
        ? 'Pause the draws at decision points: each still gets its decision row, unavailable (randomisation_paused)'
        : 'Resume the draws at decision points',
    body: reasonBody,
    response: {
      200: envelope('The state after the change', randomisationState),
      400: errorResponse('Empty reason, or no study design loaded'),
      ...unauthorized,
      409: errorResponse(action === 'pause' ? 'Randomisation is already paused' : 'Randomisation is already running'),
    },
  });
  const decisionsSchema = {
    operationId: 'listDecisions',
    tags,
    summary: 'The participant\u2019s decision point decisions (one per moment), oldest first',
    params: participantParams,
    response: {
      200: envelope('The decisions', z.array(z.looseObject({}))),
      ...unauthorized,
      404: errorResponse('Unknown participant id'),
    },
  };
  const overrideSchema = {
    operationId: 'overrideArm',
    tags,
    summary: 'Staff override of a participant\u2019s arm, with a reason (recorded as an arm-overridden event)',
    params: participantParams,
    body: overrideBody,
    response: {
      200: envelope('The allocation after the override', z.looseObject({})),
      400: errorResponse('Unknown arm, empty reason, or no study design loaded'),
      ...unauthorized,
      404: errorResponse('The participant has no allocation'),
    },
  };
  return async (scope) => {
    const app = scope.withTypeProvider<ZodTypeProvider>();
    app.get('/study', { config: { permission: 'read' }, schema: studySchema }, async () => {
      const study = trials.study;
      // Without a design the server runs as before: one implicit arm, nothing allocated, nothing to hash.
      return ok(study ? { design: study.design, hash: study.hash } : { design: null, hash: null });
    });

    // `admin`: block progress tells whoever knows a block's size what its remaining allocations are.
    app.get('/study/allocations', { config: { permission: 'admin' }, schema: allocationsSchema }, async () => {
      const report = await trials.report();
      return ok(report ? reportJson(report) : null);
    });

    app.get('/study/randomisation', { config: { permission: 'read' }, schema: randomisationSchema }, async () => {
      const state = await trials.randomisation();
      return ok(state ? randomisationJson(state) : null);
    });

    for (const action of ['pause', 'resume'] as const) {
      const schema = changeRandomisationSchema(action);
      app.post(`/study/randomisation/${action}`, { config: { permission: 'admin' }, schema }, async (request) => {
        const body = request.body;
        setAuditDetail(request, JSON.stringify({ reason: body.reason }));
        const state = await trials.changeRandomisation({
          paused: action === 'pause',
          reason: body.reason,
          by: actorLabel(request),
        });
        return ok(randomisationJson(state));
      });
    }

    const decisionsPath = `${PARTICIPANTS_PATH}/:id/decisions`;
    app.get(decisionsPath, { config: { permission: 'read' }, schema: decisionsSchema }, async (request) => {
      const { id } = request.params;
      return ok((await trials.decisions(id)).map(decisionJson));
    });

    const armPath = `${PARTICIPANTS_PATH}/:id/arm`;
    app.post(armPath, { config: { permission: 'admin' }, schema: overrideSchema }, async (request) => {
      const { id } = request.params;
      const body = request.body;
      const allocation = await trials.overrideArm(id, {
        armId: body.arm,
        reason: body.reason,
        by: actorLabel(request),
      });
      return ok({
        participant_id: allocation.participantId,
        arm: allocation.armId,
        allocated_arm: allocation.allocatedArmId,
        overridden_at: allocation.override?.at.toISOString() ?? null,
        overridden_by: allocation.override?.by ?? null,
        reason: allocation.override?.reason ?? null,
      });
    });
  };
}
