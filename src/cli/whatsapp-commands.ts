/**
 * `promptpipe whatsapp login | status | logout`: linking the study's WhatsApp account for the `whatsapp-web`
 * channel. Credentials go to the database `serve` uses (SQLite in PROMPTPIPE_STATE_DIR, or DATABASE_URL).
 */
import type { Command } from 'commander';
import qrcodeTerminal from 'qrcode-terminal';
import { LINK_INSTRUCTIONS } from '../channels/whatsapp-web/connection-supervisor.ts';
import {
  type DeviceLinkingOptions,
  linkDevice,
  readLinkStatus,
  unlinkDevice,
} from '../channels/whatsapp-web/device-linking.ts';
import { DEFAULT_WHATSAPP_SESSION, WHATSAPP_WEB_CHANNEL } from '../channels/whatsapp-web/whatsapp-web-channel.ts';
import { type Config, loadConfig, readEnvironment } from '../config.ts';
import { createWhatsAppLease, loadWhatsAppSocketFactory, openStore } from '../main.ts';
import { createLogger } from '../observability/log.ts';
import { systemClock } from '../scheduling/clock.ts';
import type { Store } from '../store/store.ts';
import type { CliIo } from './cli-io.ts';

async function withLinking<T>(work: (options: DeviceLinkingOptions, store: Store, config: Config) => Promise<T>) {
  const config = loadConfig(readEnvironment());
  // The terminal shows the QR code: logs go to stderr, warnings only unless LOG_LEVEL asks for more.
  const log = createLogger({ level: config.logLevel === 'info' ? 'warn' : config.logLevel, destination: 'stderr' });
  const store = await openStore(config, log);
  try {
    return await work(
      {
        auth: store.whatsappAuth,
        session: DEFAULT_WHATSAPP_SESSION,
        clock: systemClock,
        socketFactory: await loadWhatsAppSocketFactory(config, log),
        lease: await createWhatsAppLease(config, log),
        log,
      },
      store,
      config,
    );
  } finally {
    await store.close();
  }
}

async function login(io: CliIo, options: { pairingCode?: boolean; phone?: string; timeout: string }): Promise<void> {
  if (options.pairingCode && !options.phone) {
    throw new Error('--pairing-code needs --phone +<the account number with country code>');
  }
  await withLinking(async (linking) => {
    const before = await readLinkStatus(linking);
    if (before.linked) {
      io.stdout.write(
        `Already linked as ${before.account ?? 'unknown'}. Run \`promptpipe whatsapp logout\` first to link another.\n`,
      );
      return;
    }
    io.stdout.write(
      options.pairingCode
        ? 'Requesting a pairing code…\n'
        : 'On the phone: WhatsApp → Settings → Linked devices → Link a device, and scan this QR code:\n',
    );
    const status = await linkDevice({
      ...linking,
      timeoutMs: Number(options.timeout) * 1000,
      onQr: (qr) => {
        qrcodeTerminal.generate(qr, { small: true }, (code) => io.stdout.write(`${code}\n`));
        io.stdout.write(`(QR code text for another renderer: ${qr})\n`);
      },
      onPairingCode: (code) =>
        io.stdout.write(
          `Pairing code: ${code}\nOn the phone: WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead, and type it.\n`,
        ),
      ...(options.pairingCode && options.phone ? { pairingPhone: options.phone } : {}),
    });
    io.stdout.write(
      `Linked as ${status.account ?? 'unknown'}. Credentials are stored in the database; start \`promptpipe serve\` with PROMPTPIPE_CHANNEL=${WHATSAPP_WEB_CHANNEL}.\n`,
    );
  });
}

/** The running server's view of the connection, from its /health (undefined when no server answers). */
async function serverConnectionState(config: Config): Promise<string | undefined> {
  const host = config.api.host === '0.0.0.0' || config.api.host === '::' ? '127.0.0.1' : config.api.host;
  try {
    const response = await fetch(`http://${host.includes(':') ? `[${host}]` : host}:${config.api.port}/health`, {
      signal: AbortSignal.timeout(2_000),
    });
    const body = (await response.json()) as { channels?: Record<string, { state?: string }> };
    return body.channels?.[WHATSAPP_WEB_CHANNEL]?.state ?? 'channel not enabled in the running server';
  } catch {
    return undefined;
  }
}

async function status(io: CliIo, options: { json?: boolean }): Promise<void> {
  const config = loadConfig(readEnvironment());
  const fromServer = await serverConnectionState(config);
  await withLinking(async (linking) => {
    const link = await readLinkStatus(linking);
    await printStatus(io, options, config, link, fromServer);
  }).catch(async (error: unknown) => {
    // SQLite belongs to the running server (its state-directory lock): a connected device is a linked one.
    if (fromServer === undefined) throw error;
    await printStatus(io, options, config, { linked: fromServer === 'open', account: undefined }, fromServer);
  });
}

async function printStatus(
  io: CliIo,
  options: { json?: boolean },
  config: Config,
  link: { linked: boolean; account: string | undefined },
  connection: string | undefined,
): Promise<void> {
  if (options.json) {
    io.stdout.write(
      `${JSON.stringify({ linked: link.linked, account: link.account ?? null, connection: connection ?? null, connected: connection === 'open' })}\n`,
    );
    return;
  }
  io.stdout.write(
    link.linked ? `linked: yes, as ${link.account ?? 'unknown'}\n` : `linked: no — ${LINK_INSTRUCTIONS}\n`,
  );
  io.stdout.write(
    connection === undefined
      ? `connected: no (no PromptPipe server answers on port ${config.api.port})\n`
      : `connected: ${connection === 'open' ? 'yes' : 'no'} (server reports ${connection})\n`,
  );
}

async function logout(io: CliIo, options: { timeout: string }): Promise<void> {
  await withLinking(async (linking) => {
    const result = await unlinkDevice({ ...linking, timeoutMs: Number(options.timeout) * 1000 });
    if (!result.wasLinked) {
      io.stdout.write('Not linked; nothing to do.\n');
      return;
    }
    io.stdout.write(
      result.loggedOutRemotely
        ? 'Unlinked: the device is logged out of WhatsApp and its credentials are deleted.\n'
        : 'Credentials deleted. WhatsApp could not be reached: also remove "PromptPipe" under Linked devices on the phone.\n',
    );
  });
}

export function registerWhatsAppCommands(program: Command, io: CliIo): void {
  const whatsapp = program
    .command('whatsapp')
    .description('link the study WhatsApp account for PROMPTPIPE_CHANNEL=whatsapp-web');
  whatsapp
    .command('login')
    .description('link this PromptPipe as a device of the WhatsApp account (QR code, or --pairing-code)')
    .option('--pairing-code', 'link with a numeric pairing code instead of a QR code')
    .option('--phone <phone>', 'the WhatsApp account number with country code, for --pairing-code')
    .option('--timeout <seconds>', 'give up after this many seconds', '180')
    .action((options: { pairingCode?: boolean; phone?: string; timeout: string }) => login(io, options));
  whatsapp
    .command('status')
    .description('say whether the device is linked and whether the server is connected')
    .option('--json', 'print JSON')
    .action((options: { json?: boolean }) => status(io, options));
  whatsapp
    .command('logout')
    .description('unlink the device and delete its credentials')
    .option('--timeout <seconds>', 'how long to try reaching WhatsApp', '20')
    .action((options: { timeout: string }) => logout(io, options));
}
