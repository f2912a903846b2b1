/**
 * The alert routes besides the dashboard: e-mail over SMTP (nodemailer) and a JSON webhook signed like the outbound
 * message webhook (`X-PromptPipe-Signature` over `<timestamp>.<body>`), whose `text` field makes it a Slack incoming
 * webhook as it is. Neither carries the participant's message or phone number: an alert says who to look at and why,
 * and staff read the conversation on the dashboard, behind its sign-in.
 */
import { createTransport } from 'nodemailer';
import { signatureHeaders } from '../http/webhook-signature.ts';
import type { Alert } from '../store/safety-records.ts';

export interface AlertRoute {
  readonly name: string;
  /** Rejects when the alert was not accepted (the job retries). */
  deliver(alert: Alert): Promise<void>;
}

/** One line a person understands at a glance (e-mail subject, Slack text). */
export function alertSummary(alert: Alert): string {
  const who = alert.participantId ? `participant ${alert.participantId}` : 'the study';
  const rule = alert.rule ? ` (${alert.rule})` : '';
  return `PromptPipe ${alert.urgency === 'urgent' ? 'URGENT ' : ''}alert: ${alert.kind} for ${who}, by ${alert.detector}${rule}`;
}

function alertLink(alert: Alert, publicUrl: string | undefined): string | undefined {
  if (!publicUrl) return undefined;
  return alert.participantId
    ? `${publicUrl}/dashboard/participants/${alert.participantId}`
    : `${publicUrl}/dashboard/alerts`;
}

export function alertBody(alert: Alert, publicUrl: string | undefined): Record<string, unknown> {
  const link = alertLink(alert, publicUrl);
  return {
    text: `${alertSummary(alert)}. ${alert.reason}${link ? ` ${link}` : ''}`,
    alert: {
      id: alert.id,
      participant_id: alert.participantId ?? null,
      kind: alert.kind,
      detector: alert.detector,
      rule: alert.rule ?? null,
      score: alert.score ?? null,
      urgency: alert.urgency,
      reason: alert.reason,
      source_message_id: alert.sourceMessageId ?? null,
      created_at: alert.createdAt.toISOString(),
      ...(link ? { url: link } : {}),
    },
  };
}

export function createEmailRoute(options: {
  smtpUrl: string;
  to: readonly string[];
  from: string;
  publicUrl: string | undefined;
  timeoutMs: number;
}): AlertRoute {
  const transport = createTransport(options.smtpUrl, {
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  });
  return {
    name: 'email',
    async deliver(alert) {
      const link = alertLink(alert, options.publicUrl);
      await transport.sendMail({
        from: options.from,
        to: [...options.to],
        subject: alertSummary(alert),
        text: [
          alertSummary(alert),
          '',
          `Reason: ${alert.reason}`,
          `Raised: ${alert.createdAt.toISOString()}`,
          `Alert id: ${alert.id}`,
          ...(link ? ['', `Open: ${link}`] : []),
          '',
          'Acknowledge it on the dashboard. PromptPipe is not a crisis service: follow your study safety plan.',
        ].join('\n'),
      });
    },
  };
}

export function createWebhookRoute(options: {
  url: string;
  secret: string | undefined;
  publicUrl: string | undefined;
  timeoutMs: number;
  /** The real time a receiver compares the signature's timestamp with (not a manual study clock). */
  now?: () => Date;
}): AlertRoute {
  const now = options.now ?? (() => new Date());
  return {
    name: 'webhook',
    async deliver(alert) {
      const body = JSON.stringify(alertBody(alert, options.publicUrl));
      const response = await fetch(options.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(options.secret ? signatureHeaders(options.secret, body, now()) : {}),
        },
        body,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`the alert webhook answered ${response.status}`);
    },
  };
}
