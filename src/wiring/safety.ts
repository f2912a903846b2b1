/** The safety net (risk screen, staff alerts and their routes), staff takeovers of a conversation, adherence alerts. */
import { unansweredMessageEntry } from '../inbound/inbound-transcript.ts';
import type { LlmClient } from '../llm/llm.ts';
import { ADHERENCE_CHECK_JOB, createAdherenceAlerts } from '../safety/adherence-alerts.ts';
import { createSafetyNet } from '../safety/safety-net.ts';
import { createTakeoverService, TAKEOVER_IDLE_JOB } from '../safety/takeover-service.ts';
import type { Core } from './application.ts';

export type Safety = ReturnType<typeof wireSafety>;

export function wireSafety(core: Core, modelLlm: LlmClient | undefined) {
  const { config, log, clock, store, newId, messenger, runner, notifyRunner } = core;
  // Risk detection and staff alerts (docs/safety.md).
  const net = createSafetyNet({
    settings: config.safety,
    publicUrl: config.publicUrl,
    store,
    clock,
    newId,
    log,
    messenger,
    runner,
    modelLlm,
    transcriptEntry: unansweredMessageEntry,
  });
  const takeovers = createTakeoverService({
    store,
    clock,
    newId,
    messenger,
    alerts: net.alerts,
    idleAfterMs: config.safety.takeoverIdleAfterMs,
    transcriptEntry: unansweredMessageEntry,
    onEnqueued: notifyRunner,
  });
  runner.register(TAKEOVER_IDLE_JOB, (job) => takeovers.remindIfIdle(job), { lock: false });
  const adherence = createAdherenceAlerts({
    store,
    clock,
    newId,
    log,
    alerts: net.alerts,
    rules: config.safety.adherence,
    onEnqueued: notifyRunner,
  });
  runner.register(ADHERENCE_CHECK_JOB, () => adherence.run(), { lock: false });
  return { screen: net.screen, alerts: net.alerts, takeovers, adherence };
}
