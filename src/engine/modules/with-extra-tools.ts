import type { ConversationModule } from './conversation-module.ts';

/**
 * A module offering the tools of the study's own deployment as well (the safety net's `flag_for_staff`): the
 * modules' own lists stay the contract's (specification §Tools), and the composition root adds what it wires.
 */
export function withExtraTools(module: ConversationModule, extra: readonly string[]): ConversationModule {
  return { ...module, toolNames: [...module.toolNames, ...extra.filter((name) => !module.toolNames.includes(name))] };
}
