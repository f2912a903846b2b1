/**
 * A participant's safety page (`/dashboard/participants/:id/safety`): take the conversation over (the coach goes
 * silent), reply as staff (on the participant's channel), hand it back; pause with a resume date, or resume. The
 * conversation below follows live (dashboard.js), so a message the participant sends while staff hold the
 * conversation shows up at once.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { PauseService } from '../participants/pause-service.ts';
import type { TakeoverService } from '../safety/takeover-service.ts';
import type { Store } from '../store/store.ts';
import { csrfField, layout } from './dashboard-pages.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import { html } from './html.ts';
import type { DashboardAction } from './participant-action-routes.ts';
import { dashboardEntry } from './transcript-view.ts';

export interface SafetyPageOptions {
  store: Store;
  participants: ParticipantService;
  takeovers: TakeoverService | undefined;
  pauses: PauseService | undefined;
}

export function registerSafetyPageRoutes(
  app: FastifyInstance,
  options: SafetyPageOptions,
  kit: DashboardRouteKit,
  action: DashboardAction,
): void {
  const { store, participants } = options;
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;
  const actor = (request: FastifyRequest) => request.staffActor?.label ?? 'dashboard';
  const back = (id: string, done: string) => `/dashboard/participants/${id}/safety?done=${encodeURIComponent(done)}`;

  app.get('/dashboard/participants/:id/safety', kit.needs('read'), async (request, reply) => {
    const context = kit.context(request, reply, (request.query as { done?: string }).done);
    if (!context) return reply;
    const id = idOf(request);
    const participant = await participants.get(id);
    const takeover = await store.takeovers.get(id);
    const held = await store.alerts.heldTurn(id);
    const transcript = await participants.history(id, { limit: 50 });
    const zone = participant.timezone || 'UTC';
    const lastId = transcript.at(-1)?.id ?? 0;
    const csrf = csrfField(context);
    const takeoverSection = takeover
      ? html`<p><strong>Taken over</strong> by ${takeover.takenBy} since ${takeover.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC (timers ${takeover.timers === 'pause' ? 'paused' : 'kept'}). The coach does not answer meanwhile.</p>
<form method="post" action="/dashboard/participants/${id}/safety/message">${csrf}<label for="staff-text">Staff message</label><textarea id="staff-text" name="text" required maxlength="4096"></textarea> <button type="submit">Send as staff</button></form>
<form method="post" action="/dashboard/participants/${id}/safety/handback" class="inline">${csrf}<button type="submit">Hand back to the coach</button></form>`
      : html`<form method="post" action="/dashboard/participants/${id}/safety/takeover">${csrf}<label><input type="checkbox" name="pause_timers" value="1"> pause the daily prompt meanwhile</label> <button type="submit">Take over the conversation</button></form>`;
    const pauseSection =
      participant.status === 'paused'
        ? html`<p>Paused.</p><form method="post" action="/dashboard/participants/${id}/safety/resume" class="inline">${csrf}<button type="submit">Resume now</button></form>`
        : html`<form method="post" action="/dashboard/participants/${id}/safety/pause">${csrf}<label for="resume-on">Resume on (optional)</label><input id="resume-on" name="resume_on" type="date"> <button type="submit">Pause (vacation mode)</button></form>`;
    const body = html`<p><a href="/dashboard/participants/${id}">${participant.name || id}</a> \u00b7 <a href="/dashboard/alerts">Alerts</a></p>
${held ? html`<p>The coach's reply is held until staff resolve this participant's alerts (<a href="/dashboard/alerts">Alerts</a>: resolve to let the coach answer, or discard it).</p>` : ''}
<section class="card"><h2>Takeover</h2>${takeoverSection}</section>
<section class="card"><h2>Pause</h2>${pauseSection}</section>
<section class="card"><h2>Conversation</h2><ol id="transcript" class="chat" data-live="/dashboard/participants/${id}/live?after=${lastId}" aria-live="polite">
${transcript.map((entry) => dashboardEntry(entry, zone))}</ol></section>`;
    return kit.sendPage(reply, layout(`Safety: ${participant.name || id}`, context, body));
  });

  const need = <T>(service: T | undefined): T => {
    if (!service) throw new Error('not available on this server');
    return service;
  };

  app.post(
    '/dashboard/participants/:id/safety/takeover',
    kit.needs('alerts'),
    action(async (form, request) => {
      const id = idOf(request);
      await need(options.takeovers).takeOver(id, actor(request), form['pause_timers'] ? 'pause' : 'keep');
      return back(id, 'Conversation taken over: the coach is silent until you hand it back.');
    }),
  );
  app.post(
    '/dashboard/participants/:id/safety/message',
    kit.needs('message'),
    action(async (form, request) => {
      const id = idOf(request);
      const text = form['text']?.trim() ?? '';
      if (text) await need(options.takeovers).staffMessage(id, actor(request), { type: 'text', text });
      return back(id, text ? 'Staff message sent.' : 'Nothing sent: the message was empty.');
    }),
  );
  app.post(
    '/dashboard/participants/:id/safety/handback',
    kit.needs('alerts'),
    action(async (_form, request) => {
      const id = idOf(request);
      await need(options.takeovers).handBack(id, actor(request));
      return back(id, 'Handed back to the coach.');
    }),
  );
  app.post(
    '/dashboard/participants/:id/safety/pause',
    kit.needs('write'),
    action(async (form, request) => {
      const id = idOf(request);
      await need(options.pauses).pause(id, form['resume_on'] || undefined, actor(request));
      return back(id, form['resume_on'] ? `Paused until ${form['resume_on']}.` : 'Paused.');
    }),
  );
  app.post(
    '/dashboard/participants/:id/safety/resume',
    kit.needs('write'),
    action(async (_form, request) => {
      const id = idOf(request);
      await need(options.pauses).resume(id, actor(request));
      return back(id, 'Resumed.');
    }),
  );
}
