/**
 * What a tool is: a name, a description for the model, a zod schema (the single source of both server-side
 * validation and the JSON Schema the model sees) and an execute function.
 *
 * Expected failures are values: `execute` returns `{ status: 'error', … }` and the model sees it as the tool
 * result. A thrown error is caught by the registry and becomes an error result too (§8.1 rule 5).
 */
import type { z } from 'zod';
import type { ConversationState } from '../domain/conversation-state.ts';

export type ToolStatus = 'success' | 'noop' | 'error';

/** The JSON object the model receives as the tool result. Rich: it says what changed, not just "ok". */
export interface ToolResult {
  status: ToolStatus;
  message: string;
  [field: string]: unknown;
}

export interface ToolContext {
  participantId: string;
  /** The module whose loop called the tool. */
  module: ConversationState;
  /** The inbound message this turn answers (source linking), if any. */
  sourceMessageId: string | undefined;
}

export interface Tool<Schema extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly schema: Schema;
  execute(args: z.output<Schema>, context: ToolContext): Promise<ToolResult>;
}

/** Identity helper that keeps the schema's type flowing into `execute`. */
export function defineTool<Schema extends z.ZodType>(tool: Tool<Schema>): Tool<Schema> {
  return tool;
}

export function errorResult(message: string, extra: Record<string, unknown> = {}): ToolResult {
  return { status: 'error', message, ...extra };
}
