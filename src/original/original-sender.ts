/**
 * How a prompt of the original PromptPipe API reaches a participant: its content is made (a static or custom body
 * as it is, a genai answer from the model, a branch as a numbered poll) and sent like any organiser message:
 * recorded in the transcript and the working history and queued in the outbox, over the participant's channel, in
 * one transaction.
 *
 * The original sent to any number. Here every message goes to a participant, so a number nobody holds is enrolled
 * first (without the greeting; recorded as `participant-enrolled` with source `original-api`). A withdrawn
 * participant (opted out) is never written to.
 */

import type { Clock } from '../domain/clock.ts';
import { AppError, errorMessage } from '../domain/errors.ts';
import type { Log } from '../domain/log.ts';
import { type Participant, ParticipantStatus } from '../domain/participant.ts';
import { appendToHistory } from '../engine/conversation-history.ts';
import type { Messenger, Outgoing, SentMessage } from '../engine/messenger.ts';
import type { LlmClient } from '../llm/llm.ts';
import type { ParticipantService } from '../participants/participant-service.ts';
import type { ParticipantLock } from '../store/participant-lock.ts';
import type { Store } from '../store/store.ts';
import type { PromptContent } from './original-prompt.ts';

/** The question of a branch prompt sent without a body. */
export const DEFAULT_BRANCH_QUESTION = 'Choose one option:';

/** A message made from a prompt, ready to send. */
export interface MadeMessage {
  message: Outgoing;
  /** What the working history keeps of it (a branch: the question and its numbered options). */
  historyText: string;
  llmCallId?: number;
  model?: string;
}

export interface OriginalSender {
  /** The participant holding `phoneNumber` (E.164), enrolled without a greeting when nobody does. */
  recipient(phoneNumber: string): Promise<Participant>;
  /**
   * Makes the message: for genai, one model call (for the participant's provenance when known). Throws
   * `AppError('internal')` when the model fails.
   */
  make(content: PromptContent, participantId?: string): Promise<MadeMessage>;
  /** Sends a made message under the participant's lock. */
  send(participant: Participant, made: MadeMessage, module: string): Promise<SentMessage>;
  /**
   * Sends a made message in the caller's unit of work (one of its own outside one); the caller holds the
   * participant's lock (a job handler).
   */
  sendLocked(participantId: string, made: MadeMessage, module: string): Promise<SentMessage>;
}

export interface OriginalSenderOptions {
  store: Store;
  participants: ParticipantService;
  messenger: Messenger;
  llm: LlmClient;
  lock: ParticipantLock;
  clock: Clock;
  log: Log;
}

function branchHistoryText(question: string, labels: readonly string[]): string {
  return [question, ...labels.map((label, index) => `${index + 1}. ${label}`)].join('\n');
}

export function createOriginalSender(options: OriginalSenderOptions): OriginalSender {
  const { store, participants, messenger, llm, lock, clock, log } = options;

  async function recipient(phoneNumber: string): Promise<Participant> {
    const known = await participants.findByPhone(phoneNumber);
    if (known) return known;
    try {
      return await participants.enroll({ phoneNumber }, { greet: false, source: 'original-api' });
    } catch (error) {
      // Two sends to one new number at once: the other one enrolled it.
      const enrolled =
        error instanceof AppError && error.code === 'conflict' && (await participants.findByPhone(phoneNumber));
      if (enrolled) return enrolled;
      throw error;
    }
  }

  async function generate(content: { systemPrompt: string; userPrompt: string }, participantId?: string) {
    try {
      const answer = await llm.chat({
        messages: [
          { role: 'system', content: content.systemPrompt },
          { role: 'user', content: content.userPrompt },
        ],
        purpose: 'original-genai',
        ...(participantId ? { participantId } : {}),
      });
      const text = answer.content.trim();
      if (!text) throw new Error('the model answered with no text');
      return { text, model: answer.model, ...(answer.callId === undefined ? {} : { llmCallId: answer.callId }) };
    } catch (error) {
      log.error({ participantId, error: errorMessage(error) }, 'genai prompt: generation failed');
      throw new AppError('internal', `Failed to generate message content: ${errorMessage(error)}`, { cause: error });
    }
  }

  async function make(content: PromptContent, participantId?: string): Promise<MadeMessage> {
    switch (content.type) {
      case 'static':
      case 'custom':
        return { message: { type: 'text', text: content.body }, historyText: content.body };
      case 'genai': {
        const { text, model, llmCallId } = await generate(content, participantId);
        return {
          message: { type: 'text', text },
          historyText: text,
          model,
          ...(llmCallId === undefined ? {} : { llmCallId }),
        };
      }
      case 'branch': {
        const question = content.body.trim() || DEFAULT_BRANCH_QUESTION;
        const labels = content.options.map((option) => option.label.trim());
        return {
          message: { type: 'poll', question, options: labels },
          historyText: branchHistoryText(question, labels),
        };
      }
    }
  }

  function sendLocked(participantId: string, made: MadeMessage, module: string): Promise<SentMessage> {
    return store.transaction(async () => {
      const sent = await messenger.send(participantId, made.message, {
        kind: made.message.type === 'poll' ? 'poll' : 'organiser',
        module,
        ...(made.llmCallId === undefined ? {} : { llmCallId: made.llmCallId }),
        ...(made.model ? { model: made.model } : {}),
      });
      // The participant saw it from the coach's number: the model must know it was said.
      const timestamp = clock.now().toISOString();
      await appendToHistory(store, participantId, [{ role: 'assistant', content: made.historyText, timestamp }]);
      return sent;
    });
  }

  async function send(participant: Participant, made: MadeMessage, module: string): Promise<SentMessage> {
    if (participant.status === ParticipantStatus.WITHDRAWN) {
      throw new AppError(
        'conflict',
        `participant ${participant.id} (${participant.phoneNumber}) has withdrawn: no messages are sent to them`,
      );
    }
    return lock.run(participant.id, () => sendLocked(participant.id, made, module));
  }

  return { recipient, make, send, sendLocked };
}
