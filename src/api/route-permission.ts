import type { FastifyContextConfig } from 'fastify';

/**
 * A route's permission (the wave's names: `read`, `alerts`, `message`, `write`); the staff accounts' auth hook
 * enforces it. Cast because the key is declared by that hook's module, which may not be there yet.
 */
export function permission(name: 'read' | 'write' | 'message' | 'alerts'): { config: FastifyContextConfig } {
  return { config: { permission: name } as unknown as FastifyContextConfig };
}
