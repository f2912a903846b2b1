/**
 * The production Messenger: every outgoing message is recorded in the transcript and enqueued as a durable
 * `deliver_message` job in ONE transaction, so a message is either both recorded and queued or neither. The job
 * handler (`delivery-handler.ts`) hands it to the channel with its outbound id as idempotency key and retries with
 * back-off.
 */

import type { Clock } from '../domain/clock.ts';
import { DataKey } from '../domain/data-keys.ts';
import { AppError } from '../domain/errors.ts';
import type { NewId } from '../domain/ids.ts';
import { writeData } from '../domain/participant-data.ts';
import type { Messenger, Outgoing, SentMessage } from '../engine/messenger.ts';
import { nextPollNumber, onlyPolls } from '../inbound/recorded-polls.ts';
import type { JobRunner } from '../scheduling/job-runner.ts';
import { JobStatus, type Store, type TranscriptEntry } from '../store/store.ts';
import type { OutboundMessage } from './channel.ts';

export const DELIVER_MESSAGE_JOB = 'deliver_message';
/** Delivery is retried longer than timers: a gateway outage of a few minutes must not lose a message. */
export const DELIVERY_MAX_ATTEMPTS = 8;

export interface DeliverMessagePayload extends Record<string, unknown> {
  message: OutboundMessage;
}

/** The transcript text of a poll: its question and options. */
export function describeOutgoing(message: Outgoing): string {
  return message.type === 'text' ? message.text : `${message.question} [${message.options.join(' | ')}]`;
}

/**
 * How many recent entries are read, one look after another, to find the run of polls a new poll continues: the
 * newest settles it unless it is a poll (a poll after a text starts a run), the newest two unless both are polls,
 * then at most ten. A transaction that has just sent the entries before the poll (a prompt, then its polls) answers
 * the first looks without a query.
 */
const POLL_RUN_LOOKS = [1, 2, 10];

/**
 * The number of the first option of a poll sent now to the participant (see `nextPollNumber`), read through `store`
 * (the messenger's, so inside the sending unit of work it sees what that unit has just sent).
 */
async function nextPollNumberFor(store: Pick<Store, 'transcript'>, participantId: string): Promise<number> {
  let newest: TranscriptEntry[] = [];
  for (const limit of POLL_RUN_LOOKS) {
    newest = await store.transcript.list(participantId, { limit });
    if (newest.length < limit || !onlyPolls(newest)) break;
  }
  return nextPollNumber(newest);
}

export function createOutboxMessenger(options: {
  store: Store;
  clock: Clock;
  newId: NewId;
  /** Called after a delivery job is committed, so the job runner wakes at once. */
  onEnqueued?: () => void;
  /**
   * The job runner, where it is the only claimer (SQLite): a delivery that can go now is created already claimed and
   * handed to it once committed, one claim transaction less per message. Elsewhere it is queued and claimed.
   */
  handOff?: Pick<JobRunner, 'handOffClaim' | 'runHandedOff'>;
}): Messenger {
  const { store, clock, newId, handOff } = options;
  return {
    async send(participantId, message, sendOptions): Promise<SentMessage> {
      const participant = await store.participants.get(participantId);
      if (!participant) throw new AppError('not_found', `participant ${participantId} not found`);
      const now = clock.now();
      const id = newId('out');
      const route = {
        id,
        participantId,
        to: participant.phoneNumber,
        ...(participant.channel ? { channel: participant.channel } : {}),
      };
      const outbound: OutboundMessage =
        message.type === 'text'
          ? { ...route, kind: 'text', text: message.text }
          : {
              ...route,
              kind: 'poll',
              text: message.question,
              poll: {
                id,
                question: message.question,
                options: [...message.options],
                ...(participant.language ? { language: participant.language } : {}),
              },
            };
      // Joins the caller's unit of work when one is open.
      const job = await store.transaction(async () => {
        if (outbound.poll) {
          // Right after another poll, its options are numbered on (channels without native polls).
          const firstNumber = await nextPollNumberFor(store, participantId);
          if (firstNumber > 1) outbound.poll.firstNumber = firstNumber;
        }
        await store.transcript.append([
          {
            participantId,
            role: 'assistant',
            kind: sendOptions.kind,
            content: describeOutgoing(message),
            outboundId: id,
            createdAt: now,
            ...(sendOptions.module ? { module: sendOptions.module } : {}),
            ...(sendOptions.sourceMessageId ? { sourceMessageId: sendOptions.sourceMessageId } : {}),
            ...(sendOptions.llmCallId === undefined ? {} : { llmCallId: sendOptions.llmCallId }),
            ...(sendOptions.model ? { model: sendOptions.model } : {}),
          },
        ]);
        if (message.type === 'poll') {
          const lastPoll = { id, question: message.question, options: message.options, sentAt: now.toISOString() };
          await writeData(store, participantId, { [DataKey.lastPoll]: JSON.stringify(lastPoll) }, now);
        }
        const payload: DeliverMessagePayload = { message: outbound };
        const claimFor = handOff?.handOffClaim();
        return store.jobs.enqueue(
          {
            id: newId('job'),
            kind: DELIVER_MESSAGE_JOB,
            participantId,
            runAt: now,
            payload,
            maxAttempts: DELIVERY_MAX_ATTEMPTS,
            ...(sendOptions.dedupKey ? { dedupKey: sendOptions.dedupKey } : {}),
          },
          now,
          claimFor ? { claimFor } : {},
        );
      });
      // Only once the job is committed: the runner could not see it before (PostgreSQL, other instances), and a
      // rolled-back message must not be delivered.
      if (handOff && job.status === JobStatus.RUNNING) {
        store.afterCommit(() => handOff.runHandedOff(job));
      } else {
        const { onEnqueued } = options;
        if (onEnqueued) store.afterCommit(onEnqueued);
      }
      return { id, participantId, message, options: sendOptions };
    },
  };
}
