/**
 * Who may do what: the one table of roles and their permissions, and of API-token scopes and theirs. Every HTTP route
 * names the permission it needs (`config: { permission }`) or is public by design (`config: { public: true }`: health,
 * provider webhooks with their own signatures, the web-chat link, the sign-in form); a route naming neither fails at
 * start-up (`assertRouteDeclaresAccess`), so a new route cannot be left open by forgetting.
 *
 * - `read`: participants, transcripts, state — pseudonymised (phone masked, name hidden) without `identify`.
 * - `identify`: phone numbers and names in clear.
 * - `write`: enroll, edit, delete, transition, pause, import, the study clock.
 * - `message`: organiser messages, broadcasts, staff replies.
 * - `export`: exports and statistics.
 * - `alerts`: acknowledge or resolve alerts, take over a conversation.
 * - `admin`: users, tokens, the audit trail, study settings, arm overrides.
 */
export const PERMISSIONS = ['read', 'identify', 'write', 'message', 'export', 'alerts', 'admin'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ROLES = ['admin', 'coordinator', 'researcher', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/** The table: what each role may do. A researcher granted identifiable access also gets `identify`. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  admin: PERMISSIONS,
  coordinator: ['read', 'identify', 'write', 'message', 'alerts'],
  researcher: ['read', 'export'],
  viewer: ['read'],
};

export const TOKEN_SCOPES = ['read', 'write', 'export', 'admin'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/**
 * What a personal API token may do: its scope's permissions, never more than its owner's role allows (a token is
 * the owner acting through a program, see `effectivePermissions`).
 */
export const SCOPE_PERMISSIONS: Readonly<Record<TokenScope, readonly Permission[]>> = {
  read: ['read', 'identify'],
  write: ['read', 'identify', 'write', 'message', 'alerts'],
  export: ['read', 'identify', 'export'],
  admin: PERMISSIONS,
};

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

export function isTokenScope(value: unknown): value is TokenScope {
  return typeof value === 'string' && (TOKEN_SCOPES as readonly string[]).includes(value);
}

export function isPermission(value: unknown): value is Permission {
  return typeof value === 'string' && (PERMISSIONS as readonly string[]).includes(value);
}

/** A user's permissions by role; `canIdentify` grants a researcher or viewer identifiable access. */
export function rolePermissions(role: Role, canIdentify = false): ReadonlySet<Permission> {
  const granted = new Set<Permission>(ROLE_PERMISSIONS[role]);
  if (canIdentify) granted.add('identify');
  return granted;
}

/** A personal token's permissions: its scope's, limited to what its owner's role allows. */
export function effectivePermissions(owner: ReadonlySet<Permission>, scope: TokenScope): ReadonlySet<Permission> {
  return new Set(SCOPE_PERMISSIONS[scope].filter((permission) => owner.has(permission)));
}

export const ALL_PERMISSIONS: ReadonlySet<Permission> = new Set(PERMISSIONS);

/** Throws for a route that names neither a permission nor `public` (called for every route as it is added). */
export function assertRouteDeclaresAccess(route: {
  method: string | string[];
  url: string;
  config?: { public?: boolean; permission?: unknown } | undefined;
}): void {
  const methods = [route.method].flat().join(', ');
  // Fastify adds HEAD for each GET itself, with the GET's config.
  const config = route.config;
  if (config?.public === true) return;
  if (isPermission(config?.permission)) return;
  throw new Error(
    `${methods} ${route.url}: a route must declare config.permission (${PERMISSIONS.join(', ')}) or config.public`,
  );
}
