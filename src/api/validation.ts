/**
 * Request validation with zod. A failure becomes `AppError('invalid_input')` whose message names every offending
 * field and what is expected, so a client never has to guess (and never gets a 500).
 */
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
