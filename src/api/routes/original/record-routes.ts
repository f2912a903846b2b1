/**
 * `GET /receipts`, `POST /response` and `GET /responses` of the original PromptPipe API (its docs/api.md), over
 * PromptPipe's deliveries log, inbound messages and recorded responses (`src/store/original-records.ts`).
 *
 * Where the original was broken (docs/migrating.md): `POST /response` refused nothing (a missing sender, an empty
 * body, a number that is no phone number were all stored); here each is a 400. Phone numbers are E.164. The
 * filters (`to`/`from`, `since`, `until`, `limit`) are additions: the original always returned everything.
 */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../../domain/clock.ts';
import { AppError } from '../../../domain/errors.ts';
import { toE164 } from '../../../domain/phone.ts';
import { ok } from '../../../http/envelope.ts';
import { envelope } from '../../../http/envelope-schemas.ts';
import type { ReceiptRecord, RecordFilter, ResponseRecord } from '../../../store/original-records.ts';
import type { Store } from '../../../store/store.ts';
import {
  ORIGINAL_ERRORS,
  ORIGINAL_TAGS,
  parseInstant,
  receiptSchema,
  receiptsQuerySchema,
  responseBodySchema,
  responseSchema,
  responsesQuerySchema,
} from './original-schemas.ts';

/** The original's receipt statuses; PromptPipe's other delivery outcomes are failures to deliver. */
const ORIGINAL_RECEIPT_STATUSES = new Set(['sent', 'delivered', 'read', 'failed', 'cancelled']);

const unixSeconds = (date: Date): number => Math.floor(date.getTime() / 1000);

export function receiptJson(receipt: ReceiptRecord) {
  return {
    to: receipt.to,
    status: ORIGINAL_RECEIPT_STATUSES.has(receipt.status) ? receipt.status : 'failed',
    time: unixSeconds(receipt.time),
    delivery_status: receipt.status,
    source: receipt.source,
  };
}

export function responseJson(response: ResponseRecord) {
  return {
    from: response.from,
    body: response.body,
    time: unixSeconds(response.time),
    source: response.source,
    ...(response.pollAnswer
      ? { choice: { question: response.pollAnswer.question ?? null, option: response.pollAnswer.option } }
      : {}),
  };
}

export interface RecordRouteOptions {
  store: Store;
  clock: Clock;
  defaultCountry: string;
}

export function registerRecordRoutes(app: FastifyInstance, options: RecordRouteOptions): void {
  const { store, clock, defaultCountry } = options;

  function filterOf(
    query: { since?: string | undefined; until?: string | undefined; limit?: number | undefined },
    phone: string | undefined,
    field: string,
  ) {
    const since = parseInstant(query.since, 'since');
    const until = parseInstant(query.until, 'until');
    if (since && until && until <= since) throw new AppError('invalid_input', 'until must be after since');
    const filter: RecordFilter = {
      ...(since ? { since } : {}),
      ...(until ? { until } : {}),
      ...(query.limit === undefined ? {} : { limit: query.limit }),
      ...(phone?.trim() ? { phoneNumber: toE164(phone, defaultCountry, field) } : {}),
    };
    return filter;
  }

  const api = app.withTypeProvider<ZodTypeProvider>();
  const receiptsSchema = {
    operationId: 'listReceipts',
    tags: ORIGINAL_TAGS,
    summary: 'Delivery receipts of outbound messages, oldest first',
    querystring: receiptsQuerySchema,
    response: { 200: envelope('Receipts', z.array(receiptSchema)), ...ORIGINAL_ERRORS },
  };
  const bulkRead = { permission: 'read', auditRead: true } as const;
  api.get('/receipts', { config: bulkRead, schema: receiptsSchema }, async (request) => {
    const query = request.query;
    const receipts = await store.originalRecords.receipts(filterOf(query, query.to, 'to'));
    return ok(receipts.map(receiptJson));
  });

  const recordSchema = {
    operationId: 'recordResponse',
    tags: ORIGINAL_TAGS,
    summary: 'Record a response (the server sets its time)',
    body: responseBodySchema,
    response: {
      201: envelope('Recorded ("Response recorded successfully")', z.undefined().optional()),
      ...ORIGINAL_ERRORS,
    },
  };
  api.post('/response', { config: { permission: 'write' }, schema: recordSchema }, async (request, reply) => {
    const body = request.body;
    if (!body.from?.trim()) throw new AppError('invalid_input', 'from is required: the sender phone number');
    const sender = toE164(body.from, defaultCountry, 'from');
    if (!body.body?.trim()) throw new AppError('invalid_input', 'body is required: the response text');
    const participant = await store.participants.getByPhone(sender);
    // As in the original, the server's time is recorded, whatever `time` says.
    await store.originalRecords.recordResponse({
      sender,
      body: body.body,
      receivedAt: clock.now(),
      ...(participant ? { participantId: participant.id } : {}),
    });
    return reply.code(201).send(ok(undefined, 'Response recorded successfully'));
  });

  const responsesSchema = {
    operationId: 'listResponses',
    tags: ORIGINAL_TAGS,
    summary: 'Responses: inbound messages and recorded responses, oldest first',
    querystring: responsesQuerySchema,
    response: { 200: envelope('Responses', z.array(responseSchema)), ...ORIGINAL_ERRORS },
  };
  api.get('/responses', { config: bulkRead, schema: responsesSchema }, async (request) => {
    const query = request.query;
    const responses = await store.originalRecords.responses(filterOf(query, query.from, 'from'));
    return ok(responses.map(responseJson));
  });
}

/** The original's `/stats` figures over the responses in a range, merged into PromptPipe's `/stats`. */
export async function originalResponseStats(
  store: Pick<Store, 'originalRecords'>,
  range: { from: Date | undefined; to: Date | undefined },
) {
  const figures = await store.originalRecords.responseFigures({
    ...(range.from ? { since: range.from } : {}),
    ...(range.to ? { until: range.to } : {}),
  });
  return {
    total_responses: figures.total,
    responses_per_sender: figures.perSender,
    avg_response_length: figures.total === 0 ? 0 : figures.totalLength / figures.total,
  };
}
