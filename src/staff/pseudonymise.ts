/**
 * What staff without `identify` (viewers, researchers not granted identifiable access) see instead of participants'
 * phone numbers and names: a phone number keeps its country and area digits and its last four (`+1555•••4567`), enough
 * to tell participants apart on a page and useless for calling them; a participant's name is left out.
 *
 * `pseudonymiseParticipantJson` shapes one participant object of the API. `pseudonymiseResponse` is applied to every
 * JSON answer and every dashboard page these staff receive (the access hook), so a route added later cannot leak a
 * number by forgetting: it masks every phone number in any string and drops `name` beside a `phone_number`.
 */

/** E.164-looking numbers: a `+` and 7 to 15 digits, possibly spaced or dashed as people type them. */
const PHONE_PATTERN = /\+\d(?:[\s.-]?\d){6,14}/g;

export function maskPhone(phone: string): string {
  const digits = phone.replace(/[^\d]/g, '');
  if (digits.length < 7) return '•••';
  return `+${digits.slice(0, 4)}•••${digits.slice(-4)}`;
}

export function maskPhonesIn(text: string): string {
  return text.replace(PHONE_PATTERN, (match) => maskPhone(match));
}

/** One participant object of the API (views.ts `participantJson`, snake_case). */
export function pseudonymiseParticipantJson<T extends { phone_number?: unknown; name?: unknown }>(participant: T): T {
  const { name: _name, ...rest } = participant;
  return {
    ...rest,
    ...(typeof participant.phone_number === 'string' ? { phone_number: maskPhone(participant.phone_number) } : {}),
  } as T;
}

/**
 * Deep: every string's phone numbers masked (and whatever else `hide` hides: participants' names), every
 * participant-shaped object's name dropped.
 */
export function pseudonymiseResponse(value: unknown, hide: (text: string) => string = (text) => text): unknown {
  if (typeof value === 'string') return hide(maskPhonesIn(value));
  if (Array.isArray(value)) return value.map((item) => pseudonymiseResponse(item, hide));
  if (value === null || typeof value !== 'object' || value instanceof Date || Buffer.isBuffer(value)) return value;
  const record = value as Record<string, unknown>;
  const shaped = 'phone_number' in record || 'phoneNumber' in record ? withoutName(record) : record;
  return Object.fromEntries(Object.entries(shaped).map(([key, inner]) => [key, pseudonymiseResponse(inner, hide)]));
}

function withoutName(record: Record<string, unknown>): Record<string, unknown> {
  const { name: _name, ...rest } = record;
  return rest;
}
