/**
 * One template per daily prompt outside the 24-hour window, not three. A prompt is queued with its Done poll and,
 * once a day, its intensity poll: three deliveries. When the first of them finds the participant's window closed,
 * the polls queued right behind it (due now, same participant and channel, one after another) go in the same
 * template message as its follow-ups, as long as the text fits one template (`TemplateWindow.fitsOneTemplate`).
 *
 * The folded deliveries are cancelled, and given the bundle's receipt, in the transaction that completes the bundle's
 * job, and only when it was sent: if the send fails, they are still queued, and the retry folds them again; if it
 * fails for good, each one is tried (and fails) on its own. While this job runs, the ordered claim keeps them from
 * being claimed (`orderedKinds`), so a folded poll is never also sent alone.
 */

import type { Clock } from '../../domain/clock.ts';
import { errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import type { JobCompletion, JobHandler } from '../../scheduling/job-runner.ts';
import type { Job, Store } from '../../store/store.ts';
import type { OutboundMessage, TemplateWindow } from '../channel.ts';
import type { ChannelRegistry } from '../channel-registry.ts';
import type { DeliveryReceipts } from '../delivery-receipts.ts';

/** At most this many polls ride with one message (a prompt has two). */
const MAX_FOLLOW_UPS = 3;
const SENT_STATUSES = new Set(['queued', 'sent', 'delivered', 'read']);

function messageOf(job: Job): OutboundMessage | undefined {
  const message = (job.payload as { message?: OutboundMessage }).message;
  return message && typeof message.id === 'string' ? message : undefined;
}

function withMessage(job: Job, message: OutboundMessage): Job {
  return { ...job, payload: { ...job.payload, message } };
}

export function withTemplateBundling(options: {
  handler: JobHandler;
  store: Pick<Store, 'jobs' | 'participants' | 'deliveries'>;
  channels: Pick<ChannelRegistry, 'channelFor'>;
  /** Required: the bundle's receipt is how its completion knows it was sent, and the follow-ups get a copy. */
  receipts: Pick<DeliveryReceipts, 'record'>;
  clock: Clock;
  log: Log;
}): JobHandler {
  const { handler, store, channels, receipts, clock, log } = options;

  /** The polls queued right behind `job` that may ride with it, oldest first, with their jobs. */
  async function followingPolls(job: Job, message: OutboundMessage, window: TemplateWindow) {
    const queued = await store.jobs.listPending({ participantId: job.participantId ?? '', kind: job.kind });
    const now = clock.now().getTime();
    const folded: { job: Job; message: OutboundMessage }[] = [];
    for (const candidate of queued.slice(queued.findIndex((queuedJob) => queuedJob.id === job.id) + 1)) {
      const next = messageOf(candidate);
      const due = candidate.status === 'pending' && candidate.runAt.getTime() <= now;
      if (!next || !due || next.kind !== 'poll' || next.channel !== message.channel || next.followUps) break;
      const bundle = { ...message, followUps: [...folded.map((entry) => entry.message), next] };
      if (folded.length >= MAX_FOLLOW_UPS || !window.fitsOneTemplate(bundle)) break;
      folded.push({ job: candidate, message: next });
    }
    return folded;
  }

  /** In the bundle's completion: only if it was sent, its follow-ups are done too (cancelled, same receipt). */
  async function finishFollowUps(bundle: OutboundMessage, jobIds: string[]): Promise<void> {
    const latest = (await store.deliveries.listFor(bundle.id)).at(-1);
    if (!latest || !SENT_STATUSES.has(latest.status)) return;
    const now = clock.now();
    for (const jobId of jobIds) await store.jobs.cancelById(jobId, now);
    for (const followUp of bundle.followUps ?? []) {
      const { id: _id, outboundId: _outboundId, createdAt: _createdAt, ...receipt } = latest;
      await receipts.record({ ...receipt, outboundId: followUp.id, participantId: followUp.participantId });
    }
  }

  return async (job) => {
    const queued = messageOf(job);
    const window = queued ? channels.channelFor(queued.channel)?.templateWindow : undefined;
    if (!queued || !window || !job.participantId) return handler(job);
    // The template is chosen by the participant's language (a poll carries it; a text does not).
    const language = queued.language ?? (await store.participants.get(job.participantId))?.language;
    const message = language ? { ...queued, language } : queued;
    let bundle = message;
    let foldedJobIds: string[] = [];
    if (!message.followUps && !message.outsideWindow && (await window.isClosed(message))) {
      const folded = await followingPolls(job, message, window);
      if (folded.length > 0) {
        bundle = { ...message, followUps: folded.map((entry) => entry.message) };
        foldedJobIds = folded.map((entry) => entry.job.id);
        log.info(
          { outboundId: message.id, participantId: job.participantId, followUps: foldedJobIds.length },
          'outside the WhatsApp window: the polls that follow go in the same template',
        );
      }
    }
    if (!bundle.followUps?.length) return handler(bundle === queued ? job : withMessage(job, bundle));
    const result = await handler(withMessage(job, bundle));
    if (result !== undefined && typeof result !== 'function') return result;
    const completion: JobCompletion | undefined = typeof result === 'function' ? result : undefined;
    return async () => {
      await completion?.();
      try {
        await finishFollowUps(bundle, foldedJobIds);
      } catch (error) {
        log.error({ outboundId: bundle.id, error: errorMessage(error) }, 'could not finish the folded polls');
        throw error;
      }
    };
  };
}
