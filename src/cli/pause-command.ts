/**
 * `promptpipe participants pause <id> [--until YYYY-MM-DD]` and `participants resume <id>`: vacation mode from the
 * command line. With the server running on the state directory, through its API (`POST …/pause`, `…/resume`);
 * otherwise on the database directly, as the server would.
 */
import type { Config } from '../config.ts';
import { AppError } from '../domain/errors.ts';
import type { Application } from '../main.ts';
import { callRunningServer, openOrFindServer } from './running-server.ts';

export interface PauseCommandContext {
  config: Config;
  open: () => Promise<Application>;
  print: (text: string) => void;
}

export async function pauseOrResume(
  context: PauseCommandContext,
  participantId: string,
  change: { action: 'pause'; until: string | undefined } | { action: 'resume' },
): Promise<void> {
  const { app, server } = await openOrFindServer(context.config, () => context.open());
  if (server) {
    const answer = await callRunningServer(server, context.config, {
      method: 'POST',
      path: `/conversation/participants/${encodeURIComponent(participantId)}/${change.action}`,
      body: JSON.stringify(change.action === 'pause' && change.until ? { resume_on: change.until } : {}),
      contentType: 'application/json',
    });
    if (answer.status >= 300) {
      throw new AppError('invalid_input', answer.body.message ?? `the server answered ${answer.status}`);
    }
    context.print(JSON.stringify(answer.body.result, null, 2));
    return;
  }
  try {
    const participant =
      change.action === 'pause'
        ? await app.pauses.pause(participantId, change.until, 'cli')
        : await app.pauses.resume(participantId, 'cli');
    context.print(
      JSON.stringify(
        {
          id: participant.id,
          status: participant.status,
          ...(change.action === 'pause' ? { resume_on: change.until ?? null } : {}),
        },
        null,
        2,
      ),
    );
  } finally {
    await app.stop();
  }
}
