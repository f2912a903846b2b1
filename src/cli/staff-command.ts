/**
 * `promptpipe staff create --role admin --email … --name …`: an account with a password, read from standard input
 * (never a flag: flags end up in shell history and `ps`). The first admin is made this way, or on the dashboard by
 * signing in with PROMPTPIPE_API_TOKEN. `promptpipe staff list` shows the accounts (never a hash).
 */
import type { Command } from 'commander';
import { createStaffService } from '../staff/staff-service.ts';
import type { Store } from '../store/store.ts';
import type { CliIo } from './cli-io.ts';

async function readPassword(io: CliIo): Promise<string> {
  let text = '';
  for await (const chunk of io.stdin) {
    text += String(chunk);
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

export function registerStaffCommands(program: Command, io: CliIo, openStore: () => Promise<Store>): void {
  const staff = program.command('staff').description('staff accounts of the dashboard and the API');
  staff
    .command('create')
    .description('create an account; its password is read from standard input')
    .requiredOption('--email <email>', 'e-mail address (the sign-in name)')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--role <role>', 'admin, coordinator, researcher or viewer')
    .action(async (options: { email: string; name: string; role: string }) => {
      if ('isTTY' in io.stdin && io.stdin.isTTY) io.stderr.write('Password (at least 12 characters): ');
      const password = await readPassword(io);
      const store = await openStore();
      try {
        const accounts = createStaffService({ staff: store.staff, now: () => new Date() });
        const user = await accounts.createWithPassword({
          email: options.email,
          displayName: options.name,
          role: options.role,
          password,
        });
        await store.audit.append({
          at: new Date(),
          actor: 'command line',
          actorUserId: undefined,
          actorTokenId: undefined,
          action: 'staff-created',
          participantId: undefined,
          address: undefined,
          outcome: 'success',
          status: undefined,
          detail: JSON.stringify({ id: user.id, email: user.email, role: user.role }),
        });
        io.stdout.write(`created ${user.role} ${user.email} (${user.id})\n`);
      } finally {
        await store.close();
      }
    });
  staff
    .command('list')
    .description('list the accounts')
    .action(async () => {
      const store = await openStore();
      try {
        const users = await store.staff.listUsers();
        const rows = users.map((user) => ({
          id: user.id,
          email: user.email,
          display_name: user.displayName,
          role: user.role,
          state: user.deactivatedAt ? 'deactivated' : user.passwordHash ? 'active' : 'invited',
        }));
        io.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
      } finally {
        await store.close();
      }
    });
}
