/**
 * `/conversation/participants…`: enrollment, reading, updating and unregistering participants, and the organiser's
 * views and actions on their conversation. Thin: validate, call the participant service, shape the JSON.
 */
import type { FastifyInstance } from 'fastify';
import type { Participant } from '../../domain/participant.ts';
import type { ParticipantService } from '../../participants/participant-service.ts';
import { callsById } from '../../research/provenance/provenance-view.ts';
import type { LlmCallRepository } from '../../store/store.ts';
import { ok } from '../envelope.ts';
import {
  deleteQuerySchema,
  enrollmentBodySchema,
  historyQuerySchema,
  listQuerySchema,
  organiserMessageBodySchema,
  participantIdParamsSchema,
  transitionBodySchema,
  updateBodySchema,
} from '../schemas.ts';
import { parseInput } from '../validation.ts';
import { historyEntryJson, participantJson, stateJson } from '../views.ts';

export const PARTICIPANTS_PATH = '/conversation/participants';

/**
 * A web-chat participant's private chat link (`chat_url`): `PROMPTPIPE_PUBLIC_URL` + `/chat/<token>`, or the path
 * alone without it; undefined for participants on other channels.
 */
export type ChatUrlFor = (participant: Pick<Participant, 'id' | 'channel'>) => Promise<string | undefined>;

/** `{name: undefined}` → `{}`: the service's options are exact (exactOptionalPropertyTypes). */
function defined<T extends Record<string, unknown>>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

export function registerParticipantRoutes(
  app: FastifyInstance,
  options: {
    participants: ParticipantService;
    llmCalls?: Pick<LlmCallRepository, 'getMany'>;
    /** With the web-chat channel: the participant's private chat link, returned as `chat_url`. */
    chatUrlFor?: ChatUrlFor | undefined;
    /** With the telegram channel: a new one-time deep link of a participant enrolled on it (`telegram_link`). */
    telegramLinkFor?: ((participant: Participant) => Promise<string | undefined>) | undefined;
  },
): void {
  const { participants } = options;
  const withChatUrl = async (participant: Participant) => {
    const json = participantJson(participant);
    const chatUrl = await options.chatUrlFor?.(participant);
    return chatUrl === undefined ? json : { ...json, chat_url: chatUrl };
  };
  const idOf = (params: unknown): string => parseInput(participantIdParamsSchema, params, 'path').id;

  app.post(PARTICIPANTS_PATH, { config: { permission: 'write' } }, async (request, reply) => {
    const body = parseInput(enrollmentBodySchema, request.body, 'request body');
    const { phone_number: phoneNumber, ...details } = body;
    const participant = await participants.enroll({ phoneNumber, ...defined(details) }, { source: 'api' });
    const telegramLink = await options.telegramLinkFor?.(participant);
    const json = await withChatUrl(participant);
    const enrolled = telegramLink === undefined ? json : { ...json, telegram_link: telegramLink };
    return reply.code(201).send(ok(enrolled, 'Conversation participant enrolled successfully'));
  });

  app.get(PARTICIPANTS_PATH, { config: { permission: 'read', auditRead: true } }, async (request) => {
    const query = parseInput(listQuerySchema, request.query, 'query');
    const list = await participants.list(query.status ? { status: query.status } : {});
    // One at a time: a web-chat participant without a link yet gets one issued (a write).
    const listed = [];
    for (const participant of list) listed.push(await withChatUrl(participant));
    return ok(listed);
  });

  app.get(`${PARTICIPANTS_PATH}/:id`, { config: { permission: 'read' } }, async (request) =>
    ok(await withChatUrl(await participants.get(idOf(request.params)))),
  );

  app.put(`${PARTICIPANTS_PATH}/:id`, { config: { permission: 'write' } }, async (request) => {
    const id = idOf(request.params);
    const body = parseInput(updateBodySchema, request.body, 'request body');
    const { status, ...details } = body;
    const updated = await participants.update(id, {
      ...defined(details),
      ...(status !== undefined ? { status } : {}),
    });
    return ok(await withChatUrl(updated), 'Participant updated');
  });

  app.delete(`${PARTICIPANTS_PATH}/:id`, { config: { permission: 'write' } }, async (request) => {
    const id = idOf(request.params);
    const query = parseInput(deleteQuerySchema, request.query, 'query');
    const purge = query.purge === 'true' || query.purge === '1';
    const { purgedEntries } = await participants.unregister(id, { purgeTranscript: purge });
    return ok(
      { id, purged_transcript_entries: purgedEntries },
      purge ? 'Participant unregistered and transcript purged' : 'Participant unregistered; transcript kept',
    );
  });

  app.get(`${PARTICIPANTS_PATH}/:id/history`, { config: { permission: 'read' } }, async (request) => {
    const id = idOf(request.params);
    const query = parseInput(historyQuerySchema, request.query, 'query');
    const entries = await participants.history(id, defined(query));
    const calls = options.llmCalls ? await callsById(options.llmCalls, entries) : undefined;
    return ok(entries.map((entry) => historyEntryJson(entry, calls)));
  });

  app.get(`${PARTICIPANTS_PATH}/:id/state`, { config: { permission: 'read' } }, async (request) =>
    ok(stateJson(await participants.state(idOf(request.params)))),
  );

  app.post(`${PARTICIPANTS_PATH}/:id/transition`, { config: { permission: 'write' } }, async (request) => {
    const id = idOf(request.params);
    const body = parseInput(transitionBodySchema, request.body, 'request body');
    const outcome = await participants.transition(id, {
      target: body.target_state,
      ...(body.reason ? { reason: body.reason } : {}),
    });
    return ok(
      { participant_id: id, from: outcome.from, to: outcome.to, changed: outcome.changed },
      outcome.changed ? `Conversation state changed to ${outcome.to}` : `Conversation state was already ${outcome.to}`,
    );
  });

  app.post(`${PARTICIPANTS_PATH}/:id/messages`, { config: { permission: 'message' } }, async (request, reply) => {
    const id = idOf(request.params);
    const body = parseInput(organiserMessageBodySchema, request.body, 'request body');
    const sent = await participants.sendOrganiserMessage(id, body.text);
    return reply
      .code(202)
      .send(
        ok(
          { id: sent.id, participant_id: id, kind: 'organiser' as const, text: body.text },
          'Message queued for delivery',
        ),
      );
  });
}
