/** What the dashboard is built from: the composition root passes it to `createDashboardRoutes` (dashboard-routes.ts). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthThrottle } from '../api/auth-throttle.ts';
import type { Clock } from '../domain/clock.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { PauseService } from '../participants/pause-service.ts';
import type { ImportService } from '../research/import/import-service.ts';
import type { AlertService } from '../safety/alert-service.ts';
import type { TakeoverService } from '../safety/takeover-service.ts';
import type { JobRunner } from '../scheduling/job-runner.ts';
import type { AuditTrail } from '../staff/audit-trail.ts';
import type { StaffAccess } from '../staff/staff-access.ts';
import type { Store } from '../store/store.ts';
import type { TrialService } from '../trials/trial-service.ts';
import type { LiveTranscripts } from './live-transcript.ts';
import type { TelegramLinksView } from './participant-routes.ts';
import type { WebChatLinks } from './web-chat-links.ts';

export interface DashboardOptions {
  /** Staff sessions and credentials; the composition root shares them with the API's access hook (auth.ts). */
  access: StaffAccess;
  auditTrail: AuditTrail;
  /** Wrong sign-ins per client address; the API's bearer tokens count against the same one. */
  authThrottle: AuthThrottle;
  /** Whether `EXPORT_PSEUDONYM_KEY` is set: the export page offers pseudonymised files only then. */
  exportPseudonymKeySet: boolean;
  /** `EVAL_REPORTS_DIR`: the `promptpipe eval` runs staff rate (`/dashboard/evaluations`). */
  evalReportsDir?: string | undefined;
  store: Store;
  participants: ParticipantService;
  /** Bulk enrolment: the same validation, pacing and report as the API and the CLI. */
  imports: ImportService;
  clock: Clock;
  runner: Pick<JobRunner, 'advanceTo'> | undefined;
  /** The enabled channels, the default first. */
  channelNames: readonly string[];
  /** Present when the web-chat channel is enabled. */
  chatLinks: WebChatLinks | undefined;
  /** Present when the telegram channel is enabled: the participant page shows a one-time deep link. */
  telegramLinks?: TelegramLinksView | undefined;
  live: (app: FastifyInstance) => LiveTranscripts;
  /** The trial (`STUDY_DESIGN_FILE`): the allocation report page. */
  trials?: TrialService;
  /** Acknowledging and resolving alerts from the inbox (`/dashboard/alerts`). */
  alerts?: AlertService;
  /** Taking a conversation over and pausing, from a participant's safety page. */
  takeovers?: TakeoverService;
  pauses?: PauseService;
}

/** dashboard-routes.ts's `action`: the handler gets the form and answers where to redirect. */
export type DashboardAction = (
  handler: (form: Record<string, string>, request: FastifyRequest) => Promise<string>,
) => (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
