/**
 * The `alert_delivery` job: one route of one alert. Each attempt's outcome is recorded on the delivery row (the
 * dashboard shows it); a failure rethrows so the job runner retries with back-off, and the last attempt marks the
 * delivery failed. A route that is down delays nothing else: the participant's safety message is its own delivery.
 */

import type { Clock } from '../domain/clock.ts';
import { errorMessage } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import type { Job, Store } from '../store/store.ts';
import type { AlertRoute } from './alert-routes.ts';

export function createAlertDeliveryHandler(options: {
  store: Store;
  clock: Clock;
  routes: readonly AlertRoute[];
  log: Log;
}): (job: Job) => Promise<void> {
  const { store, clock, log } = options;
  return async (job) => {
    const alertId = String(job.payload['alertId'] ?? '');
    const routeName = String(job.payload['route'] ?? '');
    const alert = await store.alerts.get(alertId);
    if (!alert) {
      log.warn({ alertId, route: routeName }, 'alert gone (its participant was deleted): delivery dropped');
      return;
    }
    const route = options.routes.find((candidate) => candidate.name === routeName);
    if (!route) {
      // Configured when the alert was raised, removed since: recorded, not retried (it cannot start working).
      await store.alerts.recordAttempt(alertId, routeName, {
        status: 'failed',
        error: `the ${routeName} route is no longer configured`,
        at: clock.now(),
      });
      return;
    }
    try {
      await route.deliver(alert);
    } catch (error) {
      const last = job.attempts >= job.maxAttempts;
      await store.alerts.recordAttempt(alertId, routeName, {
        status: last ? 'failed' : 'pending',
        error: errorMessage(error),
        at: clock.now(),
      });
      log.error(
        { alertId, route: routeName, attempt: job.attempts, error: errorMessage(error) },
        'alert not delivered',
      );
      throw error;
    }
    await store.alerts.recordAttempt(alertId, routeName, { status: 'delivered', at: clock.now() });
    log.info({ alertId, route: routeName }, 'alert delivered');
  };
}
