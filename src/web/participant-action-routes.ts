/**
 * The participant page's actions: message, move to INTAKE / FEEDBACK, status, a new chat link, delete (with its
 * confirmation page). Each POST goes through the dashboard's `action` (session + CSRF, then POST/redirect/GET).
 */
import type { FastifyInstance } from 'fastify';
import { ConversationState } from '../domain/conversation-state.ts';
import { AppError } from '../domain/errors.ts';
import { PARTICIPANT_STATUSES, type ParticipantStatus } from '../domain/participant.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { Store } from '../store/store.ts';
import type { DashboardAction } from './dashboard-options.ts';
import { deletePage } from './dashboard-pages.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import type { WebChatLinks } from './web-chat-links.ts';

export type { DashboardAction };

export function registerParticipantActionRoutes(
  app: FastifyInstance,
  options: { store: Store; participants: ParticipantService; chatLinks: WebChatLinks | undefined },
  kit: DashboardRouteKit,
  action: DashboardAction,
): void {
  const { store, participants } = options;
  app.post(
    '/dashboard/participants/:id/message',
    kit.needs('message'),
    action(async (form, request) => {
      const { id } = request.params as { id: string };
      if (!form.text?.trim()) throw new AppError('invalid_input', 'the message is empty');
      await participants.sendOrganiserMessage(id, form.text.trim());
      return `/dashboard/participants/${id}?done=Message+sent`;
    }),
  );
  app.post(
    '/dashboard/participants/:id/transition',
    kit.needs('write'),
    action(async (form, request) => {
      const { id } = request.params as { id: string };
      const target =
        form.target === 'INTAKE'
          ? ConversationState.INTAKE
          : form.target === 'FEEDBACK'
            ? ConversationState.FEEDBACK
            : undefined;
      if (!target) throw new AppError('invalid_input', 'target must be INTAKE or FEEDBACK');
      await participants.transition(id, { target, reason: 'dashboard' });
      return `/dashboard/participants/${id}?done=Moved+to+${target}`;
    }),
  );
  app.post(
    '/dashboard/participants/:id/status',
    kit.needs('write'),
    action(async (form, request) => {
      const { id } = request.params as { id: string };
      const status = form.status as ParticipantStatus;
      if (!PARTICIPANT_STATUSES.includes(status)) throw new AppError('invalid_input', `unknown status ${form.status}`);
      await participants.update(id, { status });
      return `/dashboard/participants/${id}?done=Status+${status}`;
    }),
  );
  app.post(
    '/dashboard/participants/:id/chat-link',
    kit.needs('write'),
    action(async (_form, request) => {
      const { id } = request.params as { id: string };
      await participants.get(id);
      if (!options.chatLinks) throw new AppError('conflict', 'the web-chat channel is not enabled');
      await options.chatLinks.renew(id);
      return `/dashboard/participants/${id}?done=New+chat+link+issued;+the+old+one+no+longer+works`;
    }),
  );
  app.get('/dashboard/participants/:id/delete', kit.needs('write'), async (request, reply) => {
    const page = kit.context(request, reply);
    if (!page) return reply;
    const { id } = request.params as { id: string };
    const participant = await participants.get(id);
    const entries = await store.transcript.list(id);
    return kit.sendPage(reply, deletePage(page, participant, entries.length));
  });
  app.post(
    '/dashboard/participants/:id/delete',
    kit.needs('write'),
    action(async (form, request) => {
      const { id } = request.params as { id: string };
      // Revokes the participant's chat link too (participant-service.ts), as every way of deleting does.
      await participants.unregister(id, { purgeTranscript: form.purge === 'true' });
      return '/dashboard?deleted=1';
    }),
  );
}
