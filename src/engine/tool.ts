/**
 * What a tool is: a name, a description for the model, a zod schema (the single source of both server-side
 * validation and the JSON Schema the model sees) and an execute function.
 *
 * Expected failures are values: `execute` returns `{ status: 'error', … }` and the model sees it as the tool
 * result. A thrown error is caught by the registry and becomes an error result too (specification §Tool loop, rule 5).
 */
import type { z } from 'zod';
import type { ConversationState } from '../domain/conversation-state.ts';

export type ToolStatus = 'success' | 'noop' | 'error';

/** The JSON object the model receives as the tool result. Rich: it says what changed, not just "ok". */
export interface ToolResult {
  status: ToolStatus;
  message: string;
  /**
   * The participant's whole profile after the call, for the model (`save_user_profile`). The transcript's tool_result
   * row keeps it; the `tool-called` event leaves it out (see `auditedResult` in turn-recorder.ts).
   */
  profile?: unknown;
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
  /**
   * The tool only reads and writes the store (no model call, no network, nothing slow): the loop may run it inside
   * the unit of work that records its call and result, which its writes (through the store) then join. A tool that
   * waits on anything else must not say so: a transaction is never held across a model call. Every tool writes
   * through the store and joins whatever unit of work is open; this flag only says whether the loop may open one
   * around it.
   */
  readonly databaseOnly?: boolean;
}

/** Identity helper that keeps the schema's type flowing into `execute`. */
export function defineTool<Schema extends z.ZodType>(tool: Tool<Schema>): Tool<Schema> {
  return tool;
}

export function errorResult(message: string, extra: Record<string, unknown> = {}): ToolResult {
  return { status: 'error', message, ...extra };
}
