/**
 * The dashboard's alerts inbox (`/dashboard/alerts`): open and acknowledged alerts first, each with its deliveries,
 * and forms to acknowledge (optional note) and resolve (note required), recorded with the signed-in staff member.
 * `/dashboard/alerts/count` is a server-sent event stream of the number of open alerts, which every page shows in its
 * header (dashboard.js): it polls the count, so an alert raised by any process on the database shows up at once.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errorMessage } from '../domain/errors.ts';
import type { AlertService } from '../safety/alert-service.ts';
import type { Alert, AlertDelivery } from '../store/safety-records.ts';
import type { Store } from '../store/store.ts';
import { csrfField, layout, type PageContext } from './dashboard-pages.ts';
import type { DashboardRouteKit } from './dashboard-route-kit.ts';
import { html, type SafeHtml } from './html.ts';
import type { DashboardAction } from './participant-action-routes.ts';

const COUNT_POLL_MS = 1_000;
const HEARTBEAT_MS = 15_000;

function deliveryLine(deliveries: readonly AlertDelivery[]): SafeHtml {
  return html`${deliveries.map(
    (delivery) =>
      html`<span class="delivery ${delivery.status}">${delivery.route}: ${delivery.status}${delivery.lastError ? ` (${delivery.lastError})` : ''}</span> `,
  )}`;
}

function alertItem(
  context: PageContext,
  alert: Alert,
  deliveries: readonly AlertDelivery[],
  heldTurn: boolean,
): SafeHtml {
  const who = alert.participantId
    ? html`<a href="/dashboard/participants/${alert.participantId}">${alert.participantId}</a> (<a href="/dashboard/participants/${alert.participantId}/safety">take over, pause</a>)`
    : html`the study`;
  const acknowledge =
    alert.status === 'open'
      ? html`<form method="post" action="/dashboard/alerts/${alert.id}/acknowledge" class="inline">${csrfField(context)}<input name="note" aria-label="Acknowledgement note for ${alert.id}" placeholder="note (optional)"> <button type="submit">Acknowledge</button></form>`
      : html``;
  const resolve =
    alert.status === 'resolved'
      ? html`<p>Resolved by ${alert.resolvedBy ?? '?'}: ${alert.resolveNote ?? ''}</p>`
      : html`<form method="post" action="/dashboard/alerts/${alert.id}/resolve" class="inline">${csrfField(context)}<input name="note" required aria-label="Resolution note for ${alert.id}" placeholder="what was done">${heldTurn ? html` <label><input type="checkbox" name="discard_held_turn" value="1"> discard the coach's held reply</label>` : ''} <button type="submit">Resolve</button></form>`;
  return html`<li id="${alert.id}" class="alert ${alert.status} ${alert.urgency}" data-alert-id="${alert.id}"><strong>${alert.urgency === 'urgent' ? 'URGENT ' : ''}${alert.kind}</strong> for ${who}, by ${alert.detector}${alert.rule ? ` (${alert.rule})` : ''} at ${alert.createdAt.toISOString().slice(0, 16).replace('T', ' ')} UTC: ${alert.reason}. <em>${alert.status}</em>${alert.acknowledgedBy ? ` by ${alert.acknowledgedBy}${alert.acknowledgeNote ? `: ${alert.acknowledgeNote}` : ''}` : ''}
<br>${deliveryLine(deliveries)}${acknowledge} ${resolve}</li>`;
}

export function registerAlertInboxRoutes(
  app: FastifyInstance,
  options: { store: Store; alerts: AlertService | undefined },
  kit: DashboardRouteKit,
  action: DashboardAction,
): void {
  const { store } = options;
  /** The open count streams, ended when the server closes (they would keep it open). */
  const streams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of [...streams]) end();
  });

  app.get('/dashboard/alerts', kit.needs('read'), async (request, reply) => {
    const context = kit.context(request, reply);
    if (!context) return reply;
    const alerts = await store.alerts.list({ limit: 200 });
    const ordered = [
      ...alerts.filter((alert) => alert.status !== 'resolved'),
      ...alerts.filter((alert) => alert.status === 'resolved'),
    ];
    // Participants whose coach turn is held for their review: resolving may run it, or discard it.
    const held = new Set<string>();
    for (const participantId of new Set(
      ordered.flatMap((alert) => (alert.participantId ? [alert.participantId] : [])),
    )) {
      if (await store.alerts.heldTurn(participantId)) held.add(participantId);
    }
    const items = await Promise.all(
      ordered.map(async (alert) =>
        alertItem(
          context,
          alert,
          await store.alerts.deliveries(alert.id),
          alert.participantId !== undefined && held.has(alert.participantId),
        ),
      ),
    );
    const body = html`<p>PromptPipe is not a crisis service: follow your study's safety protocol.</p>
${items.length === 0 ? html`<p>No alerts.</p>` : html`<ul class="alerts">${items}</ul>`}`;
    return kit.sendPage(reply, layout('Alerts', context, body));
  });

  const actor = (request: FastifyRequest) => request.staffActor?.label ?? 'dashboard';
  const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

  app.post(
    '/dashboard/alerts/:id/acknowledge',
    kit.needs('alerts'),
    action(async (form, request) => {
      if (!options.alerts) throw new Error('alerts are not configured');
      await options.alerts.acknowledge(idOf(request), actor(request), form['note']?.trim() || undefined);
      return '/dashboard/alerts';
    }),
  );

  app.post(
    '/dashboard/alerts/:id/resolve',
    kit.needs('alerts'),
    action(async (form, request) => {
      if (!options.alerts) throw new Error('alerts are not configured');
      await options.alerts.resolve(idOf(request), actor(request), form['note']?.trim() ?? '', {
        heldTurn: form['discard_held_turn'] ? 'discard' : 'run',
      });
      return '/dashboard/alerts';
    }),
  );

  app.get('/dashboard/alerts/count', kit.needs('read'), (request, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    let last: number | undefined;
    let ended = false;
    const poll = async (): Promise<void> => {
      try {
        const count = await store.alerts.countOpen();
        if (count !== last && !ended) {
          last = count;
          reply.raw.write(`data: ${count}\n\n`);
        }
      } catch (error) {
        request.log.warn({ error: errorMessage(error) }, 'alert count stream: read failed');
      }
    };
    void poll();
    const timer = setInterval(() => void poll(), COUNT_POLL_MS);
    const heartbeat = setInterval(() => reply.raw.write(': keep-alive\n\n'), HEARTBEAT_MS);
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(timer);
      clearInterval(heartbeat);
      streams.delete(end);
      reply.raw.end();
    };
    streams.add(end);
    request.raw.on('close', end);
  });
}
