/** The pages of staff accounts: sign-in, invitation, users, tokens, a secret shown once. The audit page: audit-page.ts. */
import { ROLES, TOKEN_SCOPES } from '../domain/permissions.ts';
import type { ApiTokenRecord, StaffUser } from '../store/staff-store.ts';
import { csrfField, layout, type PageContext } from './dashboard-pages.ts';
import { html, type SafeHtml } from './html.ts';

const errorLine = (error: string | undefined): SafeHtml =>
  error ? html`<p class="error" role="alert">${error}</p>` : html``;

export function signInPage(options: { error?: string; apiTokenSignIn: boolean }): string {
  return layout(
    'Sign in',
    undefined,
    html`<form method="post" action="/dashboard/login" class="card">${errorLine(options.error)}
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
${options.apiTokenSignIn ? html`<p class="hint">Or, leaving the e-mail empty (the first admin, or a set-up without accounts):</p><label for="token">API token (PROMPTPIPE_API_TOKEN)</label><input id="token" name="token" type="password" autocomplete="off">` : ''}
<button type="submit">Sign in</button></form>`,
  );
}

export function invitationPage(user: StaffUser, error?: string): string {
  return layout(
    'Choose your password',
    undefined,
    html`<form method="post" class="card">${errorLine(error)}<p>Welcome, ${user.displayName} (${user.email}, ${user.role}).</p>
<label for="password">Password (at least 12 characters)</label><input id="password" name="password" type="password" autocomplete="new-password" required minlength="12">
<button type="submit">Set password and sign in</button></form>`,
  );
}

export function secretPage(context: PageContext, title: string, explanation: string, secret: string): string {
  return layout(
    title,
    context,
    html`<div class="card"><p role="status">${explanation} It is shown only this once: copy it now.</p>
<p><code id="secret">${secret}</code></p><p><a href="/dashboard">Dashboard</a></p></div>`,
  );
}

const roleOptions = (selected: string): SafeHtml[] =>
  ROLES.map((role) => html`<option value="${role}" ${role === selected ? html`selected` : ''}>${role}</option>`);

export function usersPage(context: PageContext, users: readonly StaffUser[], options: { firstAdmin: boolean }): string {
  const rows = users.map(
    (user) => html`<tr><td>${user.displayName}<br><small>${user.email}</small></td>
<td>${user.deactivatedAt ? 'deactivated' : user.passwordHash ? 'active' : 'invited'}</td>
<td><form method="post" action="/dashboard/users/${user.id}/role" class="inline">${csrfField(context)}<select name="role" aria-label="Role of ${user.email}">${roleOptions(user.role)}</select>
<label><input type="checkbox" name="identify" value="true" ${user.canIdentify ? html`checked` : ''}> identifiable</label> <button type="submit">Change</button></form></td>
<td>${user.deactivatedAt ? '' : html`<form method="post" action="/dashboard/users/${user.id}/deactivate" class="inline">${csrfField(context)}<button type="submit" class="danger">Deactivate</button></form>`}</td></tr>`,
  );
  const firstAdmin = options.firstAdmin
    ? html`<form method="post" action="/dashboard/users/first-admin" class="card">${csrfField(context)}<h2>Create the first admin</h2>
<p>No admin account exists yet. You signed in with the API token; create your own account (you are signed in with it at once).</p>
<label for="fa-email">E-mail</label><input id="fa-email" name="email" type="email" required>
<label for="fa-name">Display name</label><input id="fa-name" name="display_name" required>
<label for="fa-password">Password (at least 12 characters)</label><input id="fa-password" name="password" type="password" autocomplete="new-password" required minlength="12">
<button type="submit">Create admin</button></form>`
    : html``;
  return layout(
    'Users',
    context,
    html`${firstAdmin}<div class="table-wrap"><table><thead><tr><th>User</th><th>State</th><th>Role</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>
<form method="post" action="/dashboard/users/invite" class="card">${csrfField(context)}<h2>Invite</h2>
<label for="email">E-mail</label><input id="email" name="email" type="email" required>
<label for="display_name">Display name</label><input id="display_name" name="display_name" required>
<label for="role">Role</label><select id="role" name="role">${roleOptions('viewer')}</select>
<button type="submit">Invite (shows a one-time link)</button></form>`,
  );
}

export function tokensPage(
  context: PageContext,
  tokens: readonly ApiTokenRecord[],
  options: { canCreate: boolean; owners: ReadonlyMap<string, string> },
): string {
  const rows = tokens.map(
    (
      token,
    ) => html`<tr><td>${token.name}<br><small>pp_${token.id}_\u2026</small></td><td>${options.owners.get(token.userId) ?? token.userId}</td><td>${token.scope}</td>
<td>${token.revokedAt ? `revoked ${token.revokedAt.toISOString().slice(0, 16)}` : token.expiresAt ? `until ${token.expiresAt.toISOString().slice(0, 10)}` : 'no expiry'}</td>
<td>${token.revokedAt ? '' : html`<form method="post" action="/dashboard/tokens/${token.id}/revoke" class="inline">${csrfField(context)}<button type="submit" class="danger">Revoke</button></form>`}</td></tr>`,
  );
  const create = options.canCreate
    ? html`<form method="post" action="/dashboard/tokens" class="card">${csrfField(context)}<h2>New token</h2>
<label for="name">Name (what uses it)</label><input id="name" name="name" required>
<label for="scope">Scope</label><select id="scope" name="scope">${TOKEN_SCOPES.map((scope) => html`<option value="${scope}">${scope}</option>`)}</select>
<label for="expires">Expires (optional)</label><input id="expires" name="expires" type="date">
<button type="submit">Create (shows the token once)</button></form>`
    : html`<p>Tokens belong to staff accounts: sign in with your own account to create one.</p>`;
  const adminLinks = context.staff?.permissions.has('admin')
    ? html`<p><a href="/dashboard/users">Users</a> &middot; <a href="/dashboard/audit">Audit trail</a></p>`
    : html``;
  return layout(
    'API tokens',
    context,
    html`${adminLinks}<p>Signed in as ${context.staff?.label ?? ''}.</p><div class="table-wrap"><table><thead><tr><th>Token</th><th>Owner</th><th>Scope</th><th>Validity</th><th></th></tr></thead><tbody>${rows}</tbody></table></div>${create}
<form method="post" action="/dashboard/logout-everywhere" class="card">${csrfField(context)}<button type="submit">Sign out everywhere</button></form>`,
  );
}
