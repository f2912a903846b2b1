/**
 * Keeps the WhatsApp connection up: takes the connection lease, opens a socket with the stored credentials,
 * reconnects with exponential back-off when it drops, and reports a logged-out device loudly (error log, a
 * `whatsapp-logged-out` event, the state shown by `/health`). Without linked credentials it never shows a QR code
 * (that is `promptpipe whatsapp login`'s job): it says how to link and checks the database again periodically, so
 * linking while the server runs is picked up.
 *
 * States: not_linked → waiting_for_lease → connecting → open ⇄ reconnecting; logged_out (until linked again);
 * stopped.
 */

import type { Clock } from '../../domain/clock.ts';
import { errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import type { EventRepository, WhatsAppAuthRepository } from '../../store/store.ts';
import type { ConnectionLease } from './connection-lease.ts';
import { credsAreLinked, loadDatabaseAuthState, readStoredCreds } from './database-auth-state.ts';
import {
  DisconnectReason,
  disconnectStatusCode,
  type WhatsAppSocket,
  type WhatsAppSocketFactory,
} from './whatsapp-socket.ts';

export const WhatsAppConnectionState = {
  STOPPED: 'stopped',
  NOT_LINKED: 'not_linked',
  WAITING_FOR_LEASE: 'waiting_for_lease',
  CONNECTING: 'connecting',
  OPEN: 'open',
  RECONNECTING: 'reconnecting',
  LOGGED_OUT: 'logged_out',
} as const;
export type WhatsAppConnectionState = (typeof WhatsAppConnectionState)[keyof typeof WhatsAppConnectionState];

export const LINK_INSTRUCTIONS =
  'run `promptpipe whatsapp login` (QR code) or `promptpipe whatsapp login --pairing-code --phone +<number>` to link ' +
  "the study's WhatsApp account (on SQLite, stop the server first); outbound messages stay queued until then";

export interface ConnectionSupervisorOptions {
  auth: WhatsAppAuthRepository;
  events: Pick<EventRepository, 'record'>;
  session: string;
  clock: Clock;
  socketFactory: WhatsAppSocketFactory;
  lease: ConnectionLease;
  log: Log;
  /** Called with every new socket, before it connects: the channel attaches its listeners. */
  onSocket: (socket: WhatsAppSocket) => void;
  /** Delay before reconnect number `attempt` (1-based). Default 2 s · 2^(attempt−1), at most 5 min. */
  backoff?: (attempt: number) => number;
  /** How often the database is checked for new credentials, and the lease retried. Default 30 s. */
  pollMs?: number;
}

export interface ConnectionSupervisor {
  start(): void;
  stop(): Promise<void>;
  state(): WhatsAppConnectionState;
  /** The open socket, or undefined while not connected. */
  openSocket(): WhatsAppSocket | undefined;
  /** Resolves true once open, false after `timeoutMs`. */
  waitUntilOpen(timeoutMs: number): Promise<boolean>;
  /** Calls `listener` on every change of state (the channel wakes its held deliveries when it becomes open). */
  onStateChange(listener: () => void): void;
}

export function defaultReconnectBackoff(attempt: number): number {
  return Math.min(300_000, 2_000 * 2 ** Math.max(0, attempt - 1));
}

export function createConnectionSupervisor(options: ConnectionSupervisorOptions): ConnectionSupervisor {
  const { auth, events, session, clock, socketFactory, lease, log } = options;
  const backoff = options.backoff ?? defaultReconnectBackoff;
  const pollMs = options.pollMs ?? 30_000;
  let state: WhatsAppConnectionState = WhatsAppConnectionState.STOPPED;
  let socket: WhatsAppSocket | undefined;
  let timer: NodeJS.Timeout | undefined;
  let attempt = 0;
  let stopped = true;
  let announcedNotLinked = false;
  const stateListeners = new Set<() => void>();

  function setState(next: WhatsAppConnectionState): void {
    if (state === next) return;
    state = next;
    log.info({ channel: 'whatsapp-web', state: next }, `whatsapp-web: ${next.replaceAll('_', ' ')}`);
    for (const listener of stateListeners) listener();
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void connect(), delayMs);
  }

  async function connect(): Promise<void> {
    if (stopped) return;
    try {
      const creds = await readStoredCreds(auth, session);
      if (!credsAreLinked(creds)) {
        if (state !== WhatsAppConnectionState.LOGGED_OUT) setState(WhatsAppConnectionState.NOT_LINKED);
        if (!announcedNotLinked) {
          announcedNotLinked = true;
          log.warn({ channel: 'whatsapp-web', session }, `whatsapp-web: no linked device; ${LINK_INSTRUCTIONS}`);
        }
        schedule(pollMs);
        return;
      }
      announcedNotLinked = false;
      const acquired = await lease.tryAcquire(() => {
        log.error({ channel: 'whatsapp-web' }, 'whatsapp-web: lost the connection lease; disconnecting');
        socket?.end(new Error('connection lease lost'));
      });
      if (!acquired) {
        setState(WhatsAppConnectionState.WAITING_FOR_LEASE);
        schedule(pollMs);
        return;
      }
      const authState = await loadDatabaseAuthState({ repository: auth, session, clock });
      setState(attempt === 0 ? WhatsAppConnectionState.CONNECTING : WhatsAppConnectionState.RECONNECTING);
      const created = await socketFactory({ auth: authState.state, log });
      socket = created;
      // Saved in order: a later creds.update must not be overtaken by an earlier, slower write.
      let saving = Promise.resolve();
      created.ev.on('creds.update', () => {
        saving = saving
          .then(() => authState.saveCreds())
          .catch((error: unknown) =>
            log.error({ error: errorMessage(error) }, 'whatsapp-web: saving credentials failed'),
          );
      });
      created.ev.on('connection.update', (update) => {
        if (created !== socket) return;
        if (update.connection === 'open') {
          attempt = 0;
          setState(WhatsAppConnectionState.OPEN);
        } else if (update.connection === 'close') {
          socket = undefined;
          void handleClose(disconnectStatusCode(update.lastDisconnect?.error), update.lastDisconnect?.error);
        }
      });
      options.onSocket(created);
    } catch (error) {
      attempt += 1;
      const delay = backoff(attempt);
      log.error({ error: errorMessage(error), retryInMs: delay }, 'whatsapp-web: connecting failed');
      setState(WhatsAppConnectionState.RECONNECTING);
      schedule(delay);
    }
  }

  async function handleClose(statusCode: number | undefined, error: unknown): Promise<void> {
    if (stopped) return;
    if (statusCode === DisconnectReason.LOGGED_OUT) {
      await handleLoggedOut();
      return;
    }
    // After linking WhatsApp asks for an immediate restart; anything else waits a growing while.
    attempt += 1;
    const delay = statusCode === DisconnectReason.RESTART_REQUIRED ? 0 : backoff(attempt);
    log.warn(
      { channel: 'whatsapp-web', statusCode, error: error ? errorMessage(error) : undefined, retryInMs: delay },
      'whatsapp-web: connection closed; reconnecting',
    );
    setState(WhatsAppConnectionState.RECONNECTING);
    schedule(delay);
  }

  async function handleLoggedOut(): Promise<void> {
    setState(WhatsAppConnectionState.LOGGED_OUT);
    log.error(
      { channel: 'whatsapp-web', session },
      `whatsapp-web: LOGGED OUT — the linked device was removed (on the phone, or banned). Deliveries wait. To resume, ${LINK_INSTRUCTIONS}`,
    );
    try {
      // The credentials are dead: keeping them would only make every reconnect fail the same way.
      await auth.clear(session);
      await lease.release();
      await events.record({ type: 'whatsapp-logged-out', data: { session }, createdAt: clock.now() });
    } catch (error) {
      log.error({ error: errorMessage(error) }, 'whatsapp-web: recording the logout failed');
    }
    attempt = 0;
    schedule(pollMs);
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      void connect();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      const current = socket;
      socket = undefined;
      current?.end();
      await lease.close();
      setState(WhatsAppConnectionState.STOPPED);
    },
    state: () => state,
    onStateChange(listener) {
      stateListeners.add(listener);
    },
    openSocket: () => (state === WhatsAppConnectionState.OPEN ? socket : undefined),
    waitUntilOpen(timeoutMs) {
      if (state === WhatsAppConnectionState.OPEN) return Promise.resolve(true);
      return new Promise((resolve) => {
        const onChange = (): void => {
          if (state !== WhatsAppConnectionState.OPEN) return;
          finish(true);
        };
        const timeout = setTimeout(() => finish(false), timeoutMs);
        function finish(open: boolean): void {
          clearTimeout(timeout);
          stateListeners.delete(onChange);
          resolve(open);
        }
        stateListeners.add(onChange);
      });
    },
  };
}
