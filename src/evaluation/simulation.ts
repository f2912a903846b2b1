/**
 * Plays one persona through a whole study in one isolated application: enrolment and greeting, the intake, then each
 * study day's prompt, polls, reminder and feedback, walking the manual clock from one event (a due job or a persona
 * action) to the next. The persona's behaviour (answer rate, late answers, Done or not, off-topic questions, opt-out,
 * a risk message) is drawn from its seed, so the same persona and seed play the same days.
 */
import type { Environment } from '../config.ts';
import { DataKey } from '../domain/data-keys.ts';
import { errorMessage } from '../domain/errors.ts';
import { parseLocalTime } from '../domain/local-time.ts';
import type { LlmClient } from '../llm/llm.ts';
import { addLocalDays, instantAtLocalTime, localDateOf } from '../scheduling/schedule-time.ts';
import type { Persona } from './persona.ts';
import { type PersonaPlayer, playerFor, type ReplyPurpose, type SeenMessage, seededRandom } from './persona-player.ts';
import { type CoachConfiguration, EVALUATION_CHANNEL, settle, startSimulationApp } from './simulation-app.ts';
import { collectRecord, type SimulationRecord } from './simulation-record.ts';

/** The first study day of every simulation (a Monday); the persona enrols at noon, their time. */
export const SIMULATION_START_DATE = '2026-03-02';
const MINUTE = 60_000;
/** How long after a daily prompt's polls a persona answers them: promptly, or late (after the reminder). */
const PROMPT_ANSWER_DELAY_MS = 10 * MINUTE;
const LATE_ANSWER_DELAY_MS = 6 * 60 * MINUTE;

export interface SimulationOptions {
  persona: Persona;
  coach: CoachConfiguration;
  environment: Environment;
  days: number;
  /** Which repetition this is: changes the seed, so repeated runs show the spread. */
  repeat: number;
  /** The persona's intake answers stop after this many (a coach that never finishes the intake). */
  intakeTurnLimit: number;
  personaModel?: LlmClient | undefined;
  onDay?: (day: number) => void;
}

type Action =
  | { at: Date; type: 'text'; purpose: ReplyPurpose }
  | { at: Date; type: 'fixed'; text: string; mark?: 'risk' | 'opt-out' }
  | { at: Date; type: 'poll'; pollId: string; option: string };

function localInstant(persona: Persona, day: number, time: string): Date {
  const parsed = parseLocalTime(time);
  if (!parsed) throw new RangeError(`not a local time: ${time}`);
  return instantAtLocalTime(addLocalDays(SIMULATION_START_DATE, day - 1), parsed, persona.timezone);
}

/** A phone number per persona and repeat (the app is isolated; the number only has to be valid E.164). */
function phoneFor(repeat: number): string {
  return `+1555010${String(1000 + (repeat % 9000)).padStart(4, '0')}`;
}

export async function simulatePersona(options: SimulationOptions): Promise<SimulationRecord> {
  const { persona, days } = options;
  const random = seededRandom(persona.seed * 1009 + options.repeat);
  const start = localInstant(persona, 1, '12:00');
  const end = localInstant(persona, days + 1, '00:00');
  const simulation = await startSimulationApp({ environment: options.environment, coach: options.coach, start });
  const { app, delivered } = simulation;
  const player: PersonaPlayer = playerFor(persona, options.personaModel);
  const seen: SeenMessage[] = [];
  const sent: { at: Date; text: string; pollOption?: string; mark?: string }[] = [];
  const actions: Action[] = [];
  const phone = phoneFor(options.repeat);
  let participantId = '';
  let handled = 0;
  let intakeTurns = 0;
  let optedOut = false;
  let error: string | undefined;
  const answerToday = new Map<string, { answer: boolean; late: boolean }>();
  const dayOf = (at: Date) => localDateOf(at, persona.timezone);

  // The day-bound behaviour, drawn up front so a coach's replies do not shift later days' draws.
  for (let day = 2; day <= days; day += 1) {
    if (random() < persona.behaviour.offTopicRate)
      actions.push({ at: localInstant(persona, day, '15:00'), type: 'text', purpose: 'off-topic' });
  }
  const { riskDay, riskMessage, optOutDay } = persona.behaviour;
  if (riskDay !== undefined && riskMessage !== undefined && riskDay <= days) {
    actions.push({
      at: localInstant(persona, riskDay, riskDay === 1 ? '13:00' : '19:00'),
      type: 'fixed',
      text: riskMessage,
      mark: 'risk',
    });
  }
  if (optOutDay !== undefined && optOutDay <= days) {
    actions.push({ at: localInstant(persona, optOutDay, '20:00'), type: 'fixed', text: 'STOP', mark: 'opt-out' });
  }

  const inIntake = async (): Promise<boolean> => {
    const state = await app.store.flowStates.get(participantId);
    return state?.stateData[DataKey.conversationState] !== 'FEEDBACK';
  };
  const decideDay = (at: Date) => {
    const key = dayOf(at);
    let decision = answerToday.get(key);
    if (!decision) {
      decision = { answer: random() < persona.behaviour.answerRate, late: random() < persona.behaviour.lateRate };
      answerToday.set(key, decision);
    }
    return decision;
  };

  /** The persona reads what arrived since last time and plans its answers. */
  const react = async (afterOwnMessage: boolean): Promise<void> => {
    for (; handled < delivered.length; handled += 1) {
      const { at, message } = delivered[handled] as (typeof delivered)[number];
      seen.push({
        from: 'coach',
        text:
          message.kind === 'poll' ? `${message.poll?.question} [${message.poll?.options.join(' / ')}]` : message.text,
      });
      if (optedOut) continue;
      if (message.kind === 'poll' && message.poll) {
        const decision = decideDay(at);
        if (!decision.answer) continue;
        const { options: pollOptions, id } = message.poll;
        const option =
          pollOptions.length === 2
            ? random() < persona.behaviour.doneRate
              ? pollOptions[0]
              : pollOptions[1]
            : pollOptions[Math.floor(pollOptions.length / 2)];
        const delay = decision.late ? LATE_ANSWER_DELAY_MS : PROMPT_ANSWER_DELAY_MS;
        if (option) actions.push({ at: new Date(at.getTime() + delay), type: 'poll', pollId: id, option });
        continue;
      }
      if (await inIntake()) {
        if (intakeTurns < options.intakeTurnLimit)
          actions.push({ at: new Date(at.getTime() + MINUTE), type: 'text', purpose: 'intake' });
        continue;
      }
      // A coach's question in answer to the persona gets one answer; proactive texts are answered through their polls.
      if (afterOwnMessage && message.text.includes('?') && decideDay(at).answer && random() < 0.5) {
        actions.push({ at: new Date(at.getTime() + 2 * MINUTE), type: 'text', purpose: 'answer' });
      }
    }
  };

  const perform = async (action: Action): Promise<void> => {
    if (optedOut) return;
    let text: string | undefined;
    let pollAnswer: { pollId: string; option: string } | undefined;
    if (action.type === 'poll') {
      text = action.option;
      pollAnswer = { pollId: action.pollId, option: action.option };
    } else if (action.type === 'fixed') {
      text = action.text;
    } else {
      text = await player.write(action.purpose, seen);
      if (text !== undefined && action.purpose === 'intake') intakeTurns += 1;
    }
    if (text === undefined) return;
    const now = app.clock.now();
    seen.push({ from: 'persona', text });
    sent.push({
      at: now,
      text,
      ...(pollAnswer ? { pollOption: pollAnswer.option } : {}),
      ...(action.type === 'fixed' && action.mark ? { mark: action.mark } : {}),
    });
    if (action.type === 'fixed' && action.mark === 'opt-out') optedOut = true;
    await app.inbound.receive({
      channel: EVALUATION_CHANNEL,
      from: phone,
      text,
      timestamp: now,
      ...(pollAnswer ? { pollAnswer } : {}),
    });
    await settle(app);
    await react(true);
  };

  try {
    const participant = await app.participants.enroll(
      {
        phoneNumber: phone,
        name: persona.name,
        timezone: persona.timezone,
        language: persona.language,
        channel: EVALUATION_CHANNEL,
      },
      { greet: true, source: 'eval' },
    );
    participantId = participant.id;
    await settle(app);
    await react(false);
    let reportedDay = 0;
    for (;;) {
      const now = app.clock.now();
      const day = Math.floor((now.getTime() - localInstant(persona, 1, '00:00').getTime()) / (24 * 60 * MINUTE)) + 1;
      if (day !== reportedDay && day <= days) {
        reportedDay = day;
        options.onDay?.(day);
      }
      actions.sort((a, b) => a.at.getTime() - b.at.getTime());
      const due = actions[0] && actions[0].at.getTime() <= now.getTime() ? actions.shift() : undefined;
      if (due) {
        await perform(due);
        continue;
      }
      const nextJob = await app.store.jobs.nextDueAt();
      const candidates = [end.getTime(), actions[0]?.at.getTime(), nextJob?.getTime()].filter(
        (time): time is number => time !== undefined,
      );
      const target = new Date(Math.max(Math.min(...candidates), now.getTime()));
      if (now.getTime() >= end.getTime()) break;
      await app.runner.advanceTo(target.getTime() > now.getTime() ? target : new Date(now.getTime() + 1));
      await settle(app);
      await react(false);
    }
  } catch (caught) {
    error = errorMessage(caught);
  }
  try {
    return await collectRecord({
      app,
      simulation,
      persona,
      options,
      participantId,
      sent,
      start,
      end,
      intakeTurns,
      error,
    });
  } finally {
    await simulation.close();
  }
}
