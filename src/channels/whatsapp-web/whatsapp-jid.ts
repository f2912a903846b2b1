/**
 * WhatsApp addresses ("jids"): `15551234567@s.whatsapp.net` for a phone number, `…@lid` for WhatsApp's newer
 * privacy-preserving ids (LIDs), which do not contain the number and must be mapped back to it. A device suffix
 * (`15551234567:12@s.whatsapp.net`) names one linked device of the account.
 */
export const PHONE_SERVER = 's.whatsapp.net';
export const LID_SERVER = 'lid';

/** `+15551234567` → `15551234567@s.whatsapp.net`. */
export function phoneToJid(phoneNumber: string): string {
  return `${phoneNumber.replace(/^\+/, '')}@${PHONE_SERVER}`;
}

/** The account's jid without a device suffix: `15551234567:12@s.whatsapp.net` → `15551234567@s.whatsapp.net`. */
export function userJid(jid: string): string {
  const at = jid.indexOf('@');
  if (at < 0) return jid;
  const user = jid.slice(0, at).split(':')[0] ?? '';
  return `${user}@${jid.slice(at + 1)}`;
}

/** E.164 of a phone-number jid; undefined for LIDs, groups and broadcasts. */
export function jidToPhone(jid: string | null | undefined): string | undefined {
  if (!jid) return undefined;
  const normalised = userJid(jid);
  const [user, server] = normalised.split('@');
  if (server !== PHONE_SERVER || !user || !/^\d{5,16}$/.test(user)) return undefined;
  return `+${user}`;
}

export function isLid(jid: string | null | undefined): boolean {
  return Boolean(jid && userJid(jid).endsWith(`@${LID_SERVER}`));
}

/** Only one-to-one chats are conversations with a participant (not groups, broadcasts, status, newsletters). */
export function isDirectChat(jid: string | null | undefined): boolean {
  if (!jid) return false;
  const server = jid.slice(jid.indexOf('@') + 1);
  return server === PHONE_SERVER || server === LID_SERVER;
}
