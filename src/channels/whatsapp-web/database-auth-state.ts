/**
 * The linked device's credentials and Signal keys in PromptPipe's database (through the store port), in place of
 * Baileys' `useMultiFileAuthState` folder: the same contract — every key update is written before Baileys goes on,
 * `creds` is saved on every `creds.update` — with one row per value, serialised with Baileys' `BufferJSON`.
 *
 * Keys are written through at once rather than batched: Baileys ratchets Signal sessions on every message, and a
 * session key lost in a crash means messages that can no longer be decrypted.
 */
import type {
  AuthenticationCreds,
  AuthenticationState,
  SignalDataSet,
  SignalDataTypeMap,
} from '@whiskeysockets/baileys';
import type { Clock } from '../../domain/clock.ts';
import type { WhatsAppAuthEntry, WhatsAppAuthRepository } from '../../store/ports/whatsapp-auth.ts';

const CREDS_CATEGORY = 'creds';
const CREDS_KEY = '';
/** Baileys keeps its LID ↔ phone-number map among the keys: `<lid user>_reverse` → phone-number user. */
export const LID_MAPPING_CATEGORY = 'lid-mapping';

export type WhatsAppAuthState = AuthenticationState;

export interface DatabaseAuthState {
  readonly state: WhatsAppAuthState;
  /** Writes the current credentials (call on every `creds.update`). */
  saveCreds(): Promise<void>;
  /** True once a device has been linked with these credentials. */
  readonly isLinked: boolean;
}

type Baileys = typeof import('@whiskeysockets/baileys');
let baileysModule: Promise<Baileys> | undefined;
/**
 * Baileys is loaded on first use, not with this module: it is about 60 MB of memory, and a server without the
 * `whatsapp-web` channel (or a CLI command that never touches it) should not pay for it.
 */
function baileys(): Promise<Baileys> {
  baileysModule ??= import('@whiskeysockets/baileys');
  return baileysModule;
}

async function serialise(value: unknown): Promise<string> {
  return JSON.stringify(value, (await baileys()).BufferJSON.replacer);
}

async function deserialise<T>(text: string): Promise<T> {
  return JSON.parse(text, (await baileys()).BufferJSON.reviver) as T;
}

export async function readStoredCreds(
  repository: Pick<WhatsAppAuthRepository, 'read'>,
  session: string,
): Promise<AuthenticationCreds | undefined> {
  const stored = (await repository.read(session, CREDS_CATEGORY, [CREDS_KEY])).get(CREDS_KEY);
  return stored === undefined ? undefined : await deserialise<AuthenticationCreds>(stored);
}

/** Linked: the phone accepted this device (Baileys sets `me` when pairing succeeds, `registered` for pairing codes). */
export function credsAreLinked(creds: AuthenticationCreds | undefined): boolean {
  return Boolean(creds?.me?.id);
}

export async function loadDatabaseAuthState(options: {
  repository: WhatsAppAuthRepository;
  session: string;
  clock: Clock;
}): Promise<DatabaseAuthState> {
  const { repository, session, clock } = options;
  const { initAuthCreds, proto } = await baileys();
  const creds = (await readStoredCreds(repository, session)) ?? initAuthCreds();
  const write = (entries: WhatsAppAuthEntry[]) => repository.write(session, entries, clock.now());
  return {
    state: {
      creds,
      keys: {
        async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
          const stored = await repository.read(session, type, ids);
          const result: { [id: string]: SignalDataTypeMap[T] } = {};
          for (const [id, text] of stored) {
            let value: unknown = await deserialise(text);
            if (type === 'app-state-sync-key') value = proto.Message.AppStateSyncKeyData.fromObject(value as object);
            result[id] = value as SignalDataTypeMap[T];
          }
          return result;
        },
        async set(data: SignalDataSet) {
          const entries: WhatsAppAuthEntry[] = [];
          for (const [category, values] of Object.entries(data)) {
            for (const [id, value] of Object.entries(values ?? {})) {
              entries.push({ category, keyId: id, value: value ? await serialise(value) : null });
            }
          }
          await write(entries);
        },
        async clear() {
          await repository.clear(session);
        },
      },
    },
    saveCreds: async () => write([{ category: CREDS_CATEGORY, keyId: CREDS_KEY, value: await serialise(creds) }]),
    get isLinked() {
      return credsAreLinked(creds);
    },
  };
}

/** The phone-number user Baileys (or a `lid-mapping.update`) recorded for this LID user, if any. */
export async function readLidMapping(
  repository: Pick<WhatsAppAuthRepository, 'read'>,
  session: string,
  lidUser: string,
): Promise<string | undefined> {
  const key = `${lidUser}_reverse`;
  const stored = (await repository.read(session, LID_MAPPING_CATEGORY, [key])).get(key);
  return stored === undefined ? undefined : await deserialise<string>(stored);
}

/** Records a LID ↔ phone-number pair in Baileys' own format (both directions). */
export async function writeLidMapping(
  repository: Pick<WhatsAppAuthRepository, 'write'>,
  session: string,
  mapping: { lidUser: string; pnUser: string },
  now: Date,
): Promise<void> {
  await repository.write(
    session,
    [
      { category: LID_MAPPING_CATEGORY, keyId: mapping.pnUser, value: await serialise(mapping.lidUser) },
      { category: LID_MAPPING_CATEGORY, keyId: `${mapping.lidUser}_reverse`, value: await serialise(mapping.pnUser) },
    ],
    now,
  );
}
