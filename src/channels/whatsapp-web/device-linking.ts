/**
 * Linking, status and unlinking of the study's WhatsApp account (the `promptpipe whatsapp …` commands): linking
 * shows a QR code (or asks for a pairing code), waits until the phone accepts, and leaves the credentials in the
 * database for `serve`.
 */

import type { Clock } from '../../domain/clock.ts';
import { AppError, errorMessage } from '../../domain/errors.ts';
import type { Log } from '../../domain/log.ts';
import type { WhatsAppAuthRepository } from '../../store/ports/whatsapp-auth.ts';
import type { ConnectionLease } from './connection-lease.ts';
import { credsAreLinked, loadDatabaseAuthState, readStoredCreds } from './database-auth-state.ts';
import { jidToPhone } from './whatsapp-jid.ts';
import {
  DisconnectReason,
  disconnectStatusCode,
  type WhatsAppSocket,
  type WhatsAppSocketFactory,
} from './whatsapp-socket.ts';

export interface DeviceLinkingOptions {
  auth: WhatsAppAuthRepository;
  session: string;
  clock: Clock;
  socketFactory: WhatsAppSocketFactory;
  lease: ConnectionLease;
  log: Log;
}

export interface LinkStatus {
  linked: boolean;
  /** Our account's number, once linked. */
  account: string | undefined;
}

export async function readLinkStatus(options: Pick<DeviceLinkingOptions, 'auth' | 'session'>): Promise<LinkStatus> {
  const creds = await readStoredCreds(options.auth, options.session);
  const linked = credsAreLinked(creds);
  return { linked, account: linked ? jidToPhone(creds?.me?.id) : undefined };
}

/** The account's number for a pairing code: digits only, with the country code. */
export function pairingPhoneDigits(phone: string): string {
  const digits = phone.replace(/[^\d]/g, '');
  if (digits.length < 8 || digits.length > 15) {
    throw new AppError('invalid_input', `--phone must be the account's number with its country code (got "${phone}")`);
  }
  return digits;
}

/**
 * Connects with fresh (or half-linked) credentials until the phone links this device. `onQr` is called with each QR
 * code (they rotate); with `pairingPhone`, a pairing code is requested instead and passed to `onPairingCode`.
 * Resolves with the linked status; rejects after `timeoutMs` or when WhatsApp refuses.
 */
export async function linkDevice(
  options: DeviceLinkingOptions & {
    onQr: (qr: string) => void;
    onPairingCode: (code: string) => void;
    pairingPhone?: string;
    timeoutMs: number;
  },
): Promise<LinkStatus> {
  const { auth, session, clock, socketFactory, lease, log } = options;
  const existing = await readLinkStatus(options);
  if (existing.linked) return existing;
  if (!(await lease.tryAcquire(() => undefined))) {
    throw new AppError('conflict', 'another PromptPipe instance holds the WhatsApp connection; stop it to link');
  }
  const phoneDigits = options.pairingPhone === undefined ? undefined : pairingPhoneDigits(options.pairingPhone);
  let socket: WhatsAppSocket | undefined;
  try {
    return await new Promise<LinkStatus>((resolve, reject) => {
      const timeout = setTimeout(
        () => reject(new AppError('unavailable', 'linking timed out: the phone did not confirm in time')),
        options.timeoutMs,
      );
      let pairingRequested = false;
      let restarts = 0;
      let finished = false;
      const finish = (error: Error | undefined, status?: LinkStatus) => {
        // Closing the socket afterwards emits a close too, which must not start another connection.
        finished = true;
        clearTimeout(timeout);
        if (error) reject(error);
        else if (status) resolve(status);
      };
      const open = async (): Promise<void> => {
        const authState = await loadDatabaseAuthState({ repository: auth, session, clock });
        const current = await socketFactory({ auth: authState.state, log });
        socket = current;
        let saving = Promise.resolve();
        current.ev.on('creds.update', () => {
          saving = saving.then(() => authState.saveCreds());
        });
        current.ev.on('connection.update', (update) => {
          if (finished) return;
          if (update.qr) {
            if (phoneDigits === undefined) options.onQr(update.qr);
            else if (!pairingRequested) {
              pairingRequested = true;
              current.requestPairingCode(phoneDigits).then(options.onPairingCode, (error: unknown) => {
                finish(new AppError('channel_error', `requesting a pairing code failed: ${errorMessage(error)}`));
              });
            }
          }
          if (update.connection === 'open') {
            void saving.then(async () => finish(undefined, await readLinkStatus(options)));
          } else if (update.connection === 'close') {
            const code = disconnectStatusCode(update.lastDisconnect?.error);
            // Linking ends with WhatsApp asking for a restart; the new connection opens with the new credentials.
            if ((code === DisconnectReason.RESTART_REQUIRED || code === 408 || code === 428) && restarts < 5) {
              restarts += 1;
              void saving.then(open).catch((error: unknown) => finish(error as Error));
              return;
            }
            finish(
              new AppError(
                'channel_error',
                `WhatsApp closed the connection while linking (${code ?? 'no code'}: ${errorMessage(update.lastDisconnect?.error ?? 'closed')})`,
              ),
            );
          }
        });
      };
      open().catch((error: unknown) => finish(error as Error));
    });
  } finally {
    socket?.end();
    await lease.close();
  }
}

/**
 * Unlinks: logs the device out of WhatsApp when it can connect within `timeoutMs` (so it disappears from the
 * phone's linked devices), and forgets the credentials either way.
 */
export async function unlinkDevice(
  options: DeviceLinkingOptions & { timeoutMs: number },
): Promise<{ wasLinked: boolean; loggedOutRemotely: boolean }> {
  const { auth, session, clock, socketFactory, lease, log } = options;
  const status = await readLinkStatus(options);
  if (!status.linked) {
    await auth.clear(session);
    return { wasLinked: false, loggedOutRemotely: false };
  }
  let loggedOutRemotely = false;
  if (await lease.tryAcquire(() => undefined)) {
    const authState = await loadDatabaseAuthState({ repository: auth, session, clock });
    const socket = await socketFactory({ auth: authState.state, log });
    loggedOutRemotely = await new Promise<boolean>((resolve) => {
      const timeout = setTimeout(() => resolve(false), options.timeoutMs);
      socket.ev.on('connection.update', (update) => {
        if (update.connection === 'open') {
          socket.logout().then(
            () => {
              clearTimeout(timeout);
              resolve(true);
            },
            () => undefined,
          );
        } else if (update.connection === 'close' && disconnectStatusCode(update.lastDisconnect?.error) === 401) {
          clearTimeout(timeout);
          resolve(true);
        }
      });
    });
    socket.end();
    await lease.close();
  }
  await auth.clear(session);
  return { wasLinked: true, loggedOutRemotely };
}
