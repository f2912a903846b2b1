/**
 * Broadcasts: one message to every matching participant (by status, default active; by channel), never to withdrawn
 * (opted-out) participants. Each recipient gets a `broadcast_message` job, paced `60 000 / BROADCAST_RATE` ms apart;
 * when it runs (and the participant is still not withdrawn) the message is recorded in their transcript and queued in
 * the outbox (`deliver_message`, keyed `broadcast-delivery:<id>:<participant>`) in one transaction, so progress can
 * be read from the jobs: queued, sent (delivered), failed, skipped.
 */

import type { Clock } from '../../domain/clock.ts';
import { AppError } from '../../domain/errors.ts';
import type { NewId } from '../../domain/ids.ts';
import { ParticipantStatus } from '../../domain/participant.ts';
import { appendToHistory } from '../../engine/conversation-history.ts';
import type { Messenger } from '../../engine/messenger.ts';
import type { JobHandler } from '../../scheduling/job-runner.ts';
import { keysetPages } from '../../store/keyset-pages.ts';
import type { Broadcast, Store } from '../../store/store.ts';
import { pacedAt } from '../import/greeting-jobs.ts';

export const BROADCAST_MESSAGE_JOB = 'broadcast_message';
const jobKeyPrefix = (id: string): string => `broadcast:${id}:`;
const deliveryKeyPrefix = (id: string): string => `broadcast-delivery:${id}:`;

export interface BroadcastRequest {
  text: string;
  status?: readonly string[] | undefined;
  channel?: string | undefined;
  dryRun?: boolean | undefined;
}

export interface BroadcastProgress {
  broadcast: Broadcast;
  /** Waiting for their slot, or in the outbox not yet delivered. */
  queued: number;
  /** Delivered to the channel. */
  sent: number;
  failed: number;
  /** Withdrawn (opted out) or deleted before their slot. */
  skipped: number;
}

export interface BroadcastService {
  create(
    request: BroadcastRequest,
  ): Promise<{ broadcast: Broadcast | undefined; participantIds: string[]; excludedWithdrawn: number }>;
  progress(id: string): Promise<BroadcastProgress>;
}

export function createBroadcastService(options: {
  store: Store;
  clock: Clock;
  newId: NewId;
  ratePerMinute: number;
  /** The configured channel's name; a participant without a channel of its own is on it. */
  defaultChannel: string;
  onJobEnqueued?: () => void;
}): BroadcastService {
  const { store, clock, newId } = options;

  async function recipients(request: BroadcastRequest): Promise<{ ids: string[]; excludedWithdrawn: number }> {
    const statuses = new Set(request.status ?? [ParticipantStatus.ACTIVE]);
    const ids: string[] = [];
    let excludedWithdrawn = 0;
    const pages = keysetPages(
      (after: string | undefined, limit) => store.research.participantsPage({}, after, limit),
      500,
    );
    for await (const page of pages) {
      for (const participant of page) {
        const channel = (participant as { channel?: string }).channel || options.defaultChannel;
        if (request.channel !== undefined && channel !== request.channel) continue;
        if (!statuses.has(participant.status)) continue;
        if (participant.status === ParticipantStatus.WITHDRAWN) {
          excludedWithdrawn += 1;
          continue;
        }
        ids.push(participant.id);
      }
    }
    return { ids, excludedWithdrawn };
  }

  return {
    async create(request) {
      const { ids, excludedWithdrawn } = await recipients(request);
      if (request.dryRun) return { broadcast: undefined, participantIds: ids, excludedWithdrawn };
      const now = clock.now();
      const broadcast: Broadcast = {
        id: newId('bc'),
        text: request.text.trim(),
        filter: {
          status: [...(request.status ?? [ParticipantStatus.ACTIVE])],
          ...(request.channel === undefined ? {} : { channel: request.channel }),
        },
        recipients: ids.length,
        createdAt: now,
      };
      await store.transaction(async () => {
        await store.broadcasts.create(broadcast);
        for (const [index, participantId] of ids.entries()) {
          await store.jobs.enqueue(
            {
              id: newId('job'),
              kind: BROADCAST_MESSAGE_JOB,
              participantId,
              runAt: pacedAt(now, index, options.ratePerMinute),
              payload: { broadcast_id: broadcast.id },
              dedupKey: `${jobKeyPrefix(broadcast.id)}${participantId}`,
            },
            now,
          );
        }
        await store.events.record({
          type: 'broadcast-created',
          data: { broadcast_id: broadcast.id, recipients: ids.length, filter: broadcast.filter, text: broadcast.text },
          createdAt: now,
        });
      });
      options.onJobEnqueued?.();
      return { broadcast, participantIds: ids, excludedWithdrawn };
    },

    async progress(id) {
      const broadcast = await store.broadcasts.get(id);
      if (!broadcast) throw new AppError('not_found', `broadcast ${id} not found`);
      const jobs = await store.research.jobStatusCountsByKeyPrefix(jobKeyPrefix(id));
      const deliveries = await store.research.jobStatusCountsByKeyPrefix(deliveryKeyPrefix(id));
      const handed =
        (deliveries.pending ?? 0) + (deliveries.running ?? 0) + (deliveries.completed ?? 0) + (deliveries.failed ?? 0);
      const sent = deliveries.completed ?? 0;
      const failed = (jobs.failed ?? 0) + (deliveries.failed ?? 0);
      const skipped = Math.max(0, (jobs.completed ?? 0) - handed) + (jobs.cancelled ?? 0);
      // Every recipient not yet sent, failed or skipped. Counting the slot jobs and the deliveries instead counted a
      // recipient twice while their slot job had queued the delivery but was not yet marked completed.
      return { broadcast, queued: Math.max(0, broadcast.recipients - sent - failed - skipped), sent, failed, skipped };
    },
  };
}

/**
 * Runs a recipient's slot: record and queue the message through the messenger (the one outbox path, so it goes out on
 * the participant's own channel), unless they were withdrawn (opted out) meanwhile.
 */
export function createBroadcastHandler(options: { store: Store; clock: Clock; messenger: Messenger }): JobHandler {
  const { store, clock, messenger } = options;
  return async (job) => {
    const broadcastId = String(job.payload['broadcast_id'] ?? '');
    const participantId = job.participantId;
    if (!participantId) return;
    const participant = await store.participants.get(participantId);
    const broadcast = await store.broadcasts.get(broadcastId);
    const now = clock.now();
    if (!participant || !broadcast || participant.status === ParticipantStatus.WITHDRAWN) {
      await store.events.record({
        participantId,
        type: 'broadcast-skipped',
        data: { broadcast_id: broadcastId, reason: participant ? 'withdrawn' : 'participant not found' },
        createdAt: now,
      });
      return;
    }
    await store.transaction(async () => {
      const sent = await messenger.send(
        participantId,
        { type: 'text', text: broadcast.text },
        { kind: 'organiser', module: 'broadcast', dedupKey: `${deliveryKeyPrefix(broadcastId)}${participantId}` },
      );
      await appendToHistory(store, participantId, [
        { role: 'assistant', content: broadcast.text, timestamp: now.toISOString() },
      ]);
      await store.events.record({
        participantId,
        type: 'broadcast-sent',
        data: { broadcast_id: broadcastId, outbound_id: sent.id },
        createdAt: now,
      });
    });
  };
}
