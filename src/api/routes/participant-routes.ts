/**
 * `/conversation/participants…`: enrollment, reading, updating and unregistering participants, and the organiser's
 * views and actions on their conversation. Thin: validate, call the participant service, shape the JSON.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Participant } from '../../domain/participant.ts';
import { ok } from '../../http/envelope.ts';
import { envelope, errorResponse } from '../../http/envelope-schemas.ts';
import type { ParticipantService } from '../../participants/participant-service.ts';
import { callsById } from '../../research/provenance/provenance-view.ts';
import type { LlmCallRepository } from '../../store/ports/conversation-store.ts';
import { COMMON_ERRORS } from '../openapi.ts';
import {
  deleteQuerySchema,
  deleteResultSchema,
  enrollmentBodySchema,
  historyEntrySchema,
  historyQuerySchema,
  listQuerySchema,
  organiserMessageBodySchema,
  organiserMessageResultSchema,
  participantIdParamsSchema,
  participantSchema,
  stateSchema,
  transitionBodySchema,
  transitionResultSchema,
  updateBodySchema,
} from '../schemas.ts';
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
  const api = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['participants'];
  const params = participantIdParamsSchema;
  const notFound = { 404: errorResponse('Unknown participant id') };
  const withChatUrl = async (participant: Participant) => {
    const json = participantJson(participant);
    const chatUrl = await options.chatUrlFor?.(participant);
    return chatUrl === undefined ? json : { ...json, chat_url: chatUrl };
  };

  const enroll = {
    operationId: 'enrollParticipant',
    tags,
    summary: 'Enroll a participant and send the greeting',
    body: enrollmentBodySchema,
    response: {
      201: envelope('Enrolled', participantSchema),
      ...COMMON_ERRORS,
      409: errorResponse('The phone number is already enrolled'),
      413: errorResponse('Body too large'),
    },
  };
  api.post(PARTICIPANTS_PATH, { config: { permission: 'write' }, schema: enroll }, async (request, reply) => {
    const body = request.body;
    const { phone_number: phoneNumber, ...details } = body;
    const participant = await participants.enroll({ phoneNumber, ...defined(details) }, { source: 'api' });
    const telegramLink = await options.telegramLinkFor?.(participant);
    const json = await withChatUrl(participant);
    const enrolled = telegramLink === undefined ? json : { ...json, telegram_link: telegramLink };
    return reply.code(201).send(ok(enrolled, 'Conversation participant enrolled successfully'));
  });

  const list = {
    operationId: 'listParticipants',
    tags,
    summary: 'List participants',
    querystring: listQuerySchema,
    response: { 200: envelope('Participants, oldest enrolment first', z.array(participantSchema)), ...COMMON_ERRORS },
  };
  api.get(PARTICIPANTS_PATH, { config: { permission: 'read', auditRead: true }, schema: list }, async (request) => {
    const query = request.query;
    const list = await participants.list(query.status ? { status: query.status } : {});
    // One at a time: a web-chat participant without a link yet gets one issued (a write).
    const listed = [];
    for (const participant of list) listed.push(await withChatUrl(participant));
    return ok(listed);
  });

  const one = {
    operationId: 'getParticipant',
    tags,
    summary: 'One participant',
    params,
    response: { 200: envelope('The participant', participantSchema), ...COMMON_ERRORS, ...notFound },
  };
  api.get(`${PARTICIPANTS_PATH}/:id`, { config: { permission: 'read' }, schema: one }, async (request) =>
    ok(await withChatUrl(await participants.get(request.params.id))),
  );

  const update = {
    operationId: 'updateParticipant',
    tags,
    summary: 'Partial update; leaving "active" cancels pending jobs and stops proactive messages',
    params,
    body: updateBodySchema,
    response: { 200: envelope('Updated', participantSchema), ...COMMON_ERRORS, ...notFound },
  };
  api.put(`${PARTICIPANTS_PATH}/:id`, { config: { permission: 'write' }, schema: update }, async (request) => {
    const id = request.params.id;
    const body = request.body;
    const { status, ...details } = body;
    const updated = await participants.update(id, {
      ...defined(details),
      ...(status !== undefined ? { status } : {}),
    });
    return ok(await withChatUrl(updated), 'Participant updated');
  });

  const unregister = {
    operationId: 'unregisterParticipant',
    tags,
    summary: 'Unregister: notice, cancel jobs, clear state, remove; the transcript is kept unless purge=true',
    params,
    querystring: deleteQuerySchema,
    response: { 200: envelope('Unregistered', deleteResultSchema), ...COMMON_ERRORS, ...notFound },
  };
  api.delete(`${PARTICIPANTS_PATH}/:id`, { config: { permission: 'write' }, schema: unregister }, async (request) => {
    const id = request.params.id;
    const query = request.query;
    const purge = query.purge === 'true' || query.purge === '1';
    const { purgedEntries } = await participants.unregister(id, { purgeTranscript: purge });
    return ok(
      { id, purged_transcript_entries: purgedEntries },
      purge ? 'Participant unregistered and transcript purged' : 'Participant unregistered; transcript kept',
    );
  });

  const history = {
    operationId: 'getParticipantHistory',
    tags,
    summary: 'The transcript, oldest first, paged',
    params,
    querystring: historyQuerySchema,
    response: { 200: envelope('Transcript entries', z.array(historyEntrySchema)), ...COMMON_ERRORS, ...notFound },
  };
  api.get(`${PARTICIPANTS_PATH}/:id/history`, { config: { permission: 'read' }, schema: history }, async (request) => {
    const id = request.params.id;
    const query = request.query;
    const entries = await participants.history(id, defined(query));
    const calls = options.llmCalls ? await callsById(options.llmCalls, entries) : undefined;
    return ok(entries.map((entry) => historyEntryJson(entry, calls)));
  });

  const state = {
    operationId: 'getParticipantState',
    tags,
    summary: 'Conversation state, profile, schedules, pending jobs and data keys',
    params,
    response: { 200: envelope('State', stateSchema), ...COMMON_ERRORS, ...notFound },
  };
  api.get(`${PARTICIPANTS_PATH}/:id/state`, { config: { permission: 'read' }, schema: state }, async (request) =>
    ok(stateJson(await participants.state(request.params.id))),
  );

  const transition = {
    operationId: 'transitionParticipant',
    tags,
    summary: 'Admin override of the conversation sub-state (recorded as an event)',
    params,
    body: transitionBodySchema,
    response: { 200: envelope('Transitioned', transitionResultSchema), ...COMMON_ERRORS, ...notFound },
  };
  const transitionPath = `${PARTICIPANTS_PATH}/:id/transition`;
  api.post(transitionPath, { config: { permission: 'write' }, schema: transition }, async (request) => {
    const id = request.params.id;
    const body = request.body;
    const outcome = await participants.transition(id, {
      target: body.target_state,
      ...(body.reason ? { reason: body.reason } : {}),
    });
    return ok(
      { participant_id: id, from: outcome.from, to: outcome.to, changed: outcome.changed },
      outcome.changed ? `Conversation state changed to ${outcome.to}` : `Conversation state was already ${outcome.to}`,
    );
  });

  const message = {
    operationId: 'sendOrganiserMessage',
    tags,
    summary: 'Send an organiser message to the participant (recorded in the transcript)',
    params,
    body: organiserMessageBodySchema,
    response: { 202: envelope('Queued for delivery', organiserMessageResultSchema), ...COMMON_ERRORS, ...notFound },
  };
  const messagesPath = `${PARTICIPANTS_PATH}/:id/messages`;
  api.post(messagesPath, { config: { permission: 'message' }, schema: message }, async (request, reply) => {
    const id = request.params.id;
    const body = request.body;
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
