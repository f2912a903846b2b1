/**
 * What one simulated conversation leaves behind for the rules, the judge and the report: the conversation as both
 * sides saw it (stamped with the study clock), the engine's events and final state, and every model exchange.
 * Plain JSON, so a finished persona is written to the report directory and a resumed run reads it back.
 */
import { DataKey } from '../domain/data-keys.ts';
import type { Application } from '../main.ts';
import type { ConversationLine } from '../research/ratings/conversation-line.ts';
import { parseScheduleRegistry, type ScheduleInfo } from '../scheduling/schedule-registry.ts';
import type { Persona } from './persona.ts';
import type { RecordedExchange } from './recording-proxy.ts';
import type { SimulationApp } from './simulation-app.ts';

export type { ConversationLine };

export interface SimulationRecord {
  persona: string;
  configuration: string;
  repeat: number;
  days: number;
  timezone: string;
  language: string;
  start: string;
  end: string;
  intakeTurns: number;
  /** Why the simulation stopped early, if it did. */
  error?: string;
  lines: ConversationLine[];
  events: { type: string; at: string; data: Record<string, unknown> }[];
  finalState: { conversationState: string; profile: Record<string, unknown> | undefined; schedules: ScheduleInfo[] };
  exchanges: RecordedExchange[];
}

function parseProfile(raw: string | undefined): Record<string, unknown> | undefined {
  if (!raw) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export async function collectRecord(input: {
  app: Application;
  simulation: SimulationApp;
  persona: Persona;
  options: { coach: { label: string }; repeat: number; days: number };
  participantId: string;
  sent: { at: Date; text: string; pollOption?: string; mark?: string }[];
  start: Date;
  end: Date;
  intakeTurns: number;
  error: string | undefined;
}): Promise<SimulationRecord> {
  const { app, simulation, persona, participantId } = input;
  const transcript = participantId ? await app.store.transcript.list(participantId) : [];
  const byOutbound = new Map(transcript.filter((entry) => entry.outboundId).map((entry) => [entry.outboundId, entry]));
  const coachLines: ConversationLine[] = simulation.delivered.map(({ at, message }) => {
    const entry = byOutbound.get(message.id);
    return {
      at: at.toISOString(),
      from: 'coach',
      text: message.kind === 'poll' ? (message.poll?.question ?? message.text) : message.text,
      kind: entry?.kind ?? message.kind,
      ...(entry?.module ? { module: entry.module } : {}),
      ...(message.poll ? { pollOptions: message.poll.options } : {}),
    };
  });
  const personaLines: ConversationLine[] = input.sent.map((line) => ({
    at: line.at.toISOString(),
    from: 'persona',
    text: line.text,
    kind: line.pollOption ? 'poll-answer' : 'message',
    ...(line.mark ? { mark: line.mark } : {}),
  }));
  // Stable: at one instant the persona's message comes before the coach's answer to it.
  const lines = [...personaLines, ...coachLines].sort((a, b) => a.at.localeCompare(b.at));
  const events = participantId ? await app.store.events.list({ participantId }) : [];
  const state = participantId ? await app.store.flowStates.get(participantId) : undefined;
  const data = state?.stateData ?? {};
  return {
    persona: persona.id,
    configuration: input.options.coach.label,
    repeat: input.options.repeat,
    days: input.options.days,
    timezone: persona.timezone,
    language: persona.language,
    start: input.start.toISOString(),
    end: input.end.toISOString(),
    intakeTurns: input.intakeTurns,
    ...(input.error ? { error: input.error } : {}),
    lines,
    events: events.map((event) => ({ type: event.type, at: event.createdAt.toISOString(), data: event.data })),
    finalState: {
      conversationState: data[DataKey.conversationState] ?? 'INTAKE',
      profile: parseProfile(data[DataKey.userProfile]),
      schedules: parseScheduleRegistry(data[DataKey.scheduleRegistry]),
    },
    exchanges: simulation.proxy.exchanges,
  };
}
