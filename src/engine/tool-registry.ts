/**
 * The registry: which tools exist, their JSON Schema definitions for the model, and the one place a tool call is
 * parsed, validated and executed. Adding a tool is one line in the composition root: `registry.register(tool)`.
 */
import { z } from 'zod';
import { errorMessage } from '../domain/errors.ts';
import type { LlmToolCall, ToolDefinition } from '../llm/llm.ts';
import { errorResult, type Tool, type ToolContext, type ToolResult } from './tool.ts';

export interface ToolRegistry {
  register(tool: Tool): void;
  has(name: string): boolean;
  names(): string[];
  /** Definitions for the named tools that are registered, in the order given. */
  definitions(names: readonly string[]): ToolDefinition[];
  /** Never throws: invalid JSON, invalid arguments, unknown tools and thrown errors all become error results. */
  execute(call: LlmToolCall, context: ToolContext, allowed: readonly string[]): Promise<ToolResult>;
  /** Whether every named tool is allowed, registered and `databaseOnly` (see `Tool.databaseOnly`). */
  databaseOnly(names: readonly string[], allowed: readonly string[]): boolean;
}

export interface FieldProblem {
  field: string;
  problem: string;
}

/** Each invalid or missing field and what is expected, so the model can ask the participant (specification §Tools). */
export function describeIssues(error: z.ZodError): FieldProblem[] {
  return error.issues.map((issue) => ({
    field: issue.path.length > 0 ? issue.path.join('.') : '(arguments)',
    problem: issue.message,
  }));
}

export function toToolDefinition(tool: Tool): ToolDefinition {
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(tool.schema, { io: 'input' }) as Record<string, unknown>;
  return { name: tool.name, description: tool.description, parameters };
}

function parseArguments(raw: string): { ok: true; value: unknown } | { ok: false; message: string } {
  if (raw.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch (error) {
    return { ok: false, message: errorMessage(error) };
  }
}

export function createToolRegistry(initial: readonly Tool[] = []): ToolRegistry {
  const tools = new Map<string, Tool>();
  const definitionCache = new Map<string, ToolDefinition>();

  const registry: ToolRegistry = {
    register(tool) {
      tools.set(tool.name, tool);
      definitionCache.delete(tool.name);
    },
    has: (name) => tools.has(name),
    names: () => [...tools.keys()],
    definitions(names) {
      const definitions: ToolDefinition[] = [];
      for (const name of names) {
        const tool = tools.get(name);
        if (!tool) continue;
        let definition = definitionCache.get(name);
        if (!definition) {
          definition = toToolDefinition(tool);
          definitionCache.set(name, definition);
        }
        definitions.push(definition);
      }
      return definitions;
    },
    databaseOnly(names, allowed) {
      return names.every((name) => allowed.includes(name) && tools.get(name)?.databaseOnly === true);
    },
    async execute(call, context, allowed) {
      const available = allowed.filter((name) => tools.has(name));
      const tool = available.includes(call.name) ? tools.get(call.name) : undefined;
      if (!tool) {
        return errorResult(`Unknown tool "${call.name}". Available tools: ${available.join(', ')}.`, {
          available_tools: available,
        });
      }
      const parsed = parseArguments(call.arguments);
      if (!parsed.ok) {
        return errorResult(
          `The arguments for ${call.name} are not valid JSON (${parsed.message}). Send a JSON object.`,
        );
      }
      const validated = tool.schema.safeParse(parsed.value);
      if (!validated.success) {
        const problems = describeIssues(validated.error);
        const summary = problems.map((problem) => `${problem.field}: ${problem.problem}`).join('; ');
        return errorResult(
          `Invalid arguments for ${call.name}: ${summary}. Nothing was saved. Ask the participant for what is missing instead of guessing.`,
          { invalid_fields: problems },
        );
      }
      try {
        return await tool.execute(validated.data, context);
      } catch (error) {
        return errorResult(`${call.name} failed: ${errorMessage(error)}`);
      }
    },
  };
  for (const tool of initial) registry.register(tool);
  return registry;
}
