/**
 * The safety net, assembled from the configuration (main.ts calls this once): the risk screen for the inbound
 * pipeline, the alert service, and the `alert_delivery` job's handler with the configured routes.
 */
import type { SafetySettings } from '../config/safety.ts';
import type { Clock } from '../domain/clock.ts';
import type { NewId } from '../domain/ids.ts';
import type { Log } from '../domain/log.ts';
import type { Messenger } from '../engine/messenger.ts';
import type { LlmClient } from '../llm/llm.ts';
import type { JobRunner } from '../scheduling/job-runner.ts';
import type { Store } from '../store/store.ts';
import { createAlertDeliveryHandler } from './alert-delivery-handler.ts';
import { type AlertRoute, createEmailRoute, createWebhookRoute } from './alert-routes.ts';
import { ALERT_DELIVERY_JOB, type AlertService, createAlertService } from './alert-service.ts';
import { createKeywordDetector, DEFAULT_RISK_KEYWORDS } from './risk-keywords.ts';
import { createRiskModelCheck, DEFAULT_SAFETY_PROMPT } from './risk-model-check.ts';
import { DEFAULT_SAFETY_MESSAGES, safetyMessageFor } from './safety-messages.ts';
import { createSafetyScreen, type SafetyScreen } from './safety-screen.ts';

/** How long one alert route may take to accept an alert. */
const ROUTE_TIMEOUT_MS = 10_000;

export interface SafetyNet {
  screen: SafetyScreen;
  alerts: AlertService;
  routes: readonly AlertRoute[];
}

export function createSafetyNet(options: {
  settings: SafetySettings;
  publicUrl: string | undefined;
  store: Store;
  clock: Clock;
  newId: NewId;
  log: Log;
  messenger: Pick<Messenger, 'send'>;
  runner: Pick<JobRunner, 'register' | 'notify'>;
  /** The classifier's model, when `SAFETY_MODEL_CHECK` is on and a model is configured. */
  modelLlm: Pick<LlmClient, 'chat'> | undefined;
  /** Appends a message nobody answers to the transcript (inbound-transcript.ts). */
  transcriptEntry: Parameters<typeof createSafetyScreen>[0]['transcriptEntry'];
  onAlertChange?: () => void;
}): SafetyNet {
  const { settings, store, clock, newId, log } = options;
  const { alerts: routeSettings } = settings;
  const messages = { ...DEFAULT_SAFETY_MESSAGES, ...settings.messages };
  const routes: AlertRoute[] = [];
  if (routeSettings.smtpUrl && routeSettings.emailTo.length > 0) {
    routes.push(
      createEmailRoute({
        smtpUrl: routeSettings.smtpUrl,
        to: routeSettings.emailTo,
        from: routeSettings.emailFrom,
        publicUrl: options.publicUrl,
        timeoutMs: ROUTE_TIMEOUT_MS,
      }),
    );
  }
  if (routeSettings.webhookUrl) {
    routes.push(
      createWebhookRoute({
        url: routeSettings.webhookUrl,
        secret: routeSettings.webhookSecret,
        publicUrl: options.publicUrl,
        timeoutMs: ROUTE_TIMEOUT_MS,
      }),
    );
  }
  const alerts = createAlertService({
    store,
    clock,
    newId,
    routes: routes.map((route) => route.name),
    onEnqueued: () => options.runner.notify(),
    ...(options.onAlertChange ? { onChange: options.onAlertChange } : {}),
  });
  // No participant lock: an alert is not part of anyone's conversation, and must not wait behind a slow turn.
  options.runner.register(ALERT_DELIVERY_JOB, createAlertDeliveryHandler({ store, clock, routes, log }), {
    lock: false,
  });
  const model =
    settings.modelCheck && options.modelLlm
      ? createRiskModelCheck({
          llm: options.modelLlm,
          prompt: settings.prompt ?? DEFAULT_SAFETY_PROMPT,
          threshold: settings.modelThreshold,
          onError: (error) => log.warn({ error: String(error) }, 'the safety model check failed; keywords only'),
        })
      : undefined;
  const screen = createSafetyScreen({
    store,
    clock,
    log,
    // The configured lists and messages replace the built-in ones language by language.
    keywords: createKeywordDetector({ ...DEFAULT_RISK_KEYWORDS, ...settings.keywords }),
    model,
    messenger: options.messenger,
    safetyMessage: (language) => safetyMessageFor(messages, language),
    alerts,
    coachTurn: settings.coachTurn,
    review: settings.review,
    transcriptEntry: options.transcriptEntry,
  });
  return { screen, alerts, routes };
}
