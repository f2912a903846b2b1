/**
 * Risk detection on every inbound message, in the inbound pipeline before the coach's turn, under the participant's
 * lock (so in their message order). The keyword detector runs first; the model check, when configured, only for a
 * message no keyword flagged, so a normal turn waits at most for that one classification call.
 *
 * On a flag, one transaction: the message in the transcript, the study's safety message for the participant's
 * language (fixed text from the configuration, never the model's) queued for delivery, the alert with its deliveries,
 * the staff review, the `risk-detected` event and, when the coach's turn is skipped, the message marked processed.
 * The safety message is an ordinary outbox delivery, so an alert route that is down never holds it up.
 *
 * With `hold`, the flagged message and the safety message also go into the working history (the safety message
 * marked as the study's), the review row holds the turn (`AlertRepository.holdTurn`), and the participant's further
 * messages are recorded for that turn instead of being answered; the turn runs once staff end the review
 * (alert-service.ts, held-coach-turn.ts).
 */

import type { CoachTurnOnFlag } from '../config/safety.ts';
import type { Clock } from '../domain/clock.ts';
import type { Log } from '../domain/log.ts';
import type { Participant } from '../domain/participant.ts';
import { appendToHistory } from '../engine/conversation-history.ts';
import type { Messenger } from '../engine/messenger.ts';
import type { InboundMessage, Store } from '../store/store.ts';
import type { AlertService } from './alert-service.ts';
import type { KeywordDetector } from './risk-keywords.ts';
import type { RiskModelCheck } from './risk-model-check.ts';
import { recordUnansweredInbound } from './unanswered-inbound.ts';

/** How the safety message appears in the working history the held turn's model reads (it was sent, word for word). */
export const SAFETY_MESSAGE_MARK = "[The study's fixed safety message was sent to the participant]";

export interface SafetyScreen {
  /** Whether the coach's turn still runs for this message (false: the screen has marked it processed). */
  screen(inbound: InboundMessage, participant: Participant): Promise<{ coachTurn: boolean }>;
}

interface Detection {
  detector: 'keywords' | 'model';
  rule: string;
  score: number | undefined;
  language: string | undefined;
}

export function createSafetyScreen(options: {
  store: Store;
  clock: Clock;
  log: Log;
  keywords: KeywordDetector;
  model?: RiskModelCheck | undefined;
  messenger: Pick<Messenger, 'send'>;
  /** The fixed safety message for a language (falls back to English). */
  safetyMessage: (language: string) => string;
  alerts: AlertService;
  coachTurn: CoachTurnOnFlag;
  /** Whether a flag puts the participant under staff review (proactive messages stop). */
  review: boolean;
  /** Appends the flagged message to the transcript when the coach will not (no turn records it). */
  transcriptEntry: (inbound: InboundMessage) => Parameters<Store['transcript']['append']>[0][number];
}): SafetyScreen {
  const { store, clock, log } = options;

  async function detect(inbound: InboundMessage): Promise<Detection | undefined> {
    const keyword = options.keywords.match(inbound.text);
    if (keyword) return { detector: 'keywords', rule: keyword.rule, score: undefined, language: keyword.language };
    const verdict = await options.model?.classify(inbound.participantId, inbound.text);
    if (verdict?.flagged)
      return { detector: 'model', rule: verdict.category, score: verdict.score, language: undefined };
    return undefined;
  }

  /** A message of a participant whose coach turn is held: recorded for that turn, not answered now. */
  async function recordForHeldTurn(inbound: InboundMessage): Promise<void> {
    await store.transaction(async () => {
      const now = clock.now();
      await recordUnansweredInbound(store, inbound, options.transcriptEntry(inbound), 'message-held-for-review', now);
      await store.inbound.markProcessed(inbound.id, now);
    });
  }

  /** Whether this unflagged message waits for a held turn (a taken-over conversation is the staff's: not held). */
  async function waitsForHeldTurn(inbound: InboundMessage): Promise<boolean> {
    if (options.coachTurn !== 'hold') return false;
    if (!(await store.alerts.heldTurn(inbound.participantId))) return false;
    return !(await store.takeovers.get(inbound.participantId));
  }

  return {
    async screen(inbound, participant) {
      // A structured poll answer is one of the study's own options: nothing to screen.
      if (inbound.pollAnswer) return { coachTurn: true };
      // A message whose flag already committed (a retry after a crash in the coach's turn): flagged once.
      if (await store.alerts.findBySourceMessage(inbound.id)) return { coachTurn: options.coachTurn === 'reply' };
      const detection = await detect(inbound);
      if (!detection) {
        if (!(await waitsForHeldTurn(inbound))) return { coachTurn: true };
        await recordForHeldTurn(inbound);
        return { coachTurn: false };
      }
      const mode = options.coachTurn;
      const alertId = await store.transaction(async () => {
        const now = clock.now();
        const safetyText = options.safetyMessage(participant.language ?? 'en');
        if (mode !== 'reply') await store.transcript.append([options.transcriptEntry(inbound)]);
        await options.messenger.send(
          participant.id,
          { type: 'text', text: safetyText },
          { kind: 'notice', module: 'safety', sourceMessageId: inbound.id },
        );
        if (mode === 'hold') {
          await appendToHistory(store, participant.id, [
            { role: 'user', content: inbound.text, timestamp: inbound.receivedAt.toISOString() },
            { role: 'assistant', content: `${SAFETY_MESSAGE_MARK} ${safetyText}`, timestamp: now.toISOString() },
          ]);
        }
        const id = await options.alerts.raise({
          participantId: participant.id,
          kind: 'risk',
          detector: detection.detector,
          rule: detection.rule,
          score: detection.score,
          urgency: 'urgent',
          reason:
            detection.detector === 'keywords'
              ? `a message matched the safety keyword "${detection.rule}"`
              : `the safety model rated a message ${detection.score ?? '?'} (${detection.rule})`,
          sourceMessageId: inbound.id,
          review: options.review,
        });
        if (mode === 'hold') await store.alerts.holdTurn(participant.id, inbound.id);
        await store.events.record({
          participantId: participant.id,
          type: 'risk-detected',
          data: {
            detector: detection.detector,
            rule: detection.rule,
            score: detection.score ?? null,
            rule_language: detection.language ?? null,
            alert_id: id,
            coach_turn: mode === 'skip' ? 'skipped' : mode === 'hold' ? 'held' : 'answered',
          },
          sourceMessageId: inbound.id,
          createdAt: now,
        });
        if (mode !== 'reply') await store.inbound.markProcessed(inbound.id, now);
        return id;
      });
      log.warn(
        { inboundId: inbound.id, participantId: participant.id, detector: detection.detector, alertId },
        'risk detected: safety message sent, staff alerted',
      );
      return { coachTurn: mode === 'reply' };
    },
  };
}
