/**
 * What a tool is: a name, a description for the model, a zod schema (the single source of both server-side
 * validation and the JSON Schema the model sees) and an execute function.
 *
 * Expected failures are values: `execute` returns `{ status: 'error', … }` and the model sees it as the tool
 * result. A thrown error is caught by the registry and becomes an error result too (specification §Tool loop, rule 5).
 */
import type { z } from 'zod';
import type { ConversationState } from '../domain/conversation-state.ts';
import type { Store } from '../store/store.ts';

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
  /**
   * For a `transactional` tool run by the tool loop: the transaction that also records the call and its result. The
   * tool makes its writes in it (`(context.store ?? store).transaction(…)` joins it), so all of them commit together.
   */
  store?: Store;
}

export interface Tool<Schema extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly schema: Schema;
  execute(args: z.output<Schema>, context: ToolContext): Promise<ToolResult>;
  /**
   * The tool only reads and writes the store (no model call, no network, nothing slow) and makes its writes through
   * `context.store` when given: the loop may then run it inside the transaction that records its call and result.
   */
  readonly transactional?: boolean;
}

/** Identity helper that keeps the schema's type flowing into `execute`. */
export function defineTool<Schema extends z.ZodType>(tool: Tool<Schema>): Tool<Schema> {
  return tool;
}

export function errorResult(message: string, extra: Record<string, unknown> = {}): ToolResult {
  return { status: 'error', message, ...extra };
}
