/**
 * Request validation with zod. A failure becomes `AppError('invalid_input')` whose message names every offending
 * field and what is expected, so a client never has to guess (and never gets a 500). Routes declare their schemas
 * (`schema: { body, querystring, params }`, typed by `fastify-type-provider-zod`) and Fastify validates them with
 * `zodValidatorCompiler`; the OpenAPI document is generated from the same declarations (openapi.ts).
 */
import type { FastifySchemaCompiler, FastifySerializerCompiler } from 'fastify';
import type { z } from 'zod';
import { AppError } from '../domain/errors.ts';

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** One clause per problem, `;`-separated: "phone_number is required; timezone: expected string". */
export function describeZodIssues(error: z.ZodError, input: unknown): string {
  return error.issues
    .map((issue) => {
      const field = issue.path.map(String).join('.');
      if (!field) return issue.message;
      // Whatever the schema (string, enum, object), an absent field gets the same plain message.
      return valueAt(input, issue.path) === undefined ? `${field} is required` : `${field}: ${issue.message}`;
    })
    .join('; ');
}

/**
 * Parses `value` (a body, the params or the query) or throws `invalid_input`. `where` prefixes the message:
 * "invalid request body: phone_number is required".
 */
export function parseInput<Schema extends z.ZodType>(schema: Schema, value: unknown, where: string): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new AppError('invalid_input', `invalid ${where}: ${describeZodIssues(parsed.error, value)}`, {
      details: parsed.error.issues,
    });
  }
  return parsed.data;
}

/** How a message names the part of the request that failed. */
const WHERE: Readonly<Record<string, string>> = {
  body: 'request body',
  querystring: 'query',
  params: 'path',
  headers: 'headers',
};

/**
 * Fastify's validator for the zod schemas routes declare (`schema: { body, querystring, params }`): the same
 * `invalid_input` error, message and envelope as `parseInput`, before the handler runs; the handler gets the parsed
 * value. An absent body is validated as `{}`, so that it reads "phone_number is required" like an empty one.
 */
export const zodValidatorCompiler: FastifySchemaCompiler<z.ZodType> =
  ({ schema, httpPart }) =>
  (data) => {
    const where = WHERE[httpPart ?? ''] ?? httpPart ?? 'request';
    const input = httpPart === 'body' && (data === undefined || data === null) ? {} : data;
    try {
      return { value: parseInput(schema, input, where) };
    } catch (error) {
      return { error: error as Error };
    }
  };

/**
 * For a route whose declared body is documentation only: the handler reads and validates it itself (a webhook checks
 * its signature over the raw bytes first; the bulk import reads CSV or JSON). Its other parts are validated as usual.
 */
// biome-ignore lint/suspicious/noExplicitAny: a route's compiler is typed by its whole schema; this one takes any.
export const bodyDocumentedOnly: FastifySchemaCompiler<any> = (route) =>
  route.httpPart === 'body' ? (data) => ({ value: data }) : zodValidatorCompiler(route);

/**
 * Response schemas document the API; they are not enforced: responses are serialised as they are (as before the
 * schemas existed), so a field the schema forgets is not silently dropped and no response pays for a validation.
 */
export const plainJsonSerializerCompiler: FastifySerializerCompiler<unknown> = () => (data) => JSON.stringify(data);
