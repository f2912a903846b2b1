/**
 * The Graph API versions PromptPipe knows, with the date Meta stops serving each (its published "Available until",
 * https://developers.facebook.com/docs/graph-api/changelog/versions), and the start-up warning for a configured
 * version close to or past that date. A request to a retired version fails, so a study must move to a newer version
 * before the date; `WHATSAPP_CLOUD_API_URL` names the version, the default is the newest with a published end date.
 */

import { DEFAULT_GRAPH_API_VERSION, DEFAULT_WHATSAPP_CLOUD_API_URL } from '../../config/channels.ts';

/** Until (exclusive) which Meta serves each version; `undefined`: not yet published. Newest first. */
export const GRAPH_API_VERSIONS: readonly { version: string; released: string; availableUntil?: string }[] = [
  { version: 'v26.0', released: '2026-07-29' },
  { version: 'v25.0', released: '2026-02-18', availableUntil: '2028-07-29' },
  { version: 'v24.0', released: '2025-10-08', availableUntil: '2028-02-18' },
  { version: 'v23.0', released: '2025-05-29', availableUntil: '2027-10-08' },
  { version: 'v22.0', released: '2025-01-21', availableUntil: '2027-05-20' },
  { version: 'v21.0', released: '2024-10-02', availableUntil: '2027-01-21' },
  { version: 'v20.0', released: '2024-05-21', availableUntil: '2026-09-24' },
  { version: 'v19.0', released: '2024-01-23', availableUntil: '2026-05-21' },
];

/** The default (config/channels.ts): the newest version whose end date Meta has published (v25.0, until 29 July 2028). */
export { DEFAULT_GRAPH_API_VERSION, DEFAULT_WHATSAPP_CLOUD_API_URL };

/** How long before a version's end date the start-up warns. */
export const GRAPH_API_WARNING_DAYS = 90;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The `vNN.N` segment of a Graph API URL, or undefined (a proxy without one). */
export function graphApiVersionOf(apiUrl: string): string | undefined {
  const match = /\/(v\d+\.\d+)(?:\/|$)/.exec(new URL(apiUrl).pathname);
  return match?.[1];
}

function versionNumber(version: string): number {
  return Number(version.slice(1));
}

/**
 * The warning to log at start-up for this API URL at `now`, or undefined: the version's end date is within
 * {@link GRAPH_API_WARNING_DAYS} days or past, or the version is older than any PromptPipe knows (retired by Meta).
 */
export function graphApiVersionWarning(apiUrl: string, now: Date): string | undefined {
  const version = graphApiVersionOf(apiUrl);
  if (!version) return undefined;
  const known = GRAPH_API_VERSIONS.find((entry) => entry.version === version);
  const oldest = GRAPH_API_VERSIONS.at(-1);
  const advice = `set WHATSAPP_CLOUD_API_URL to a current version (the default is ${DEFAULT_WHATSAPP_CLOUD_API_URL})`;
  if (!known) {
    return oldest && versionNumber(version) < versionNumber(oldest.version)
      ? `WhatsApp Cloud API: Graph API ${version} is older than ${oldest.version}, which Meta retires on ${oldest.availableUntil}; ${advice}`
      : undefined;
  }
  if (!known.availableUntil) return undefined;
  const until = new Date(`${known.availableUntil}T00:00:00.000Z`);
  const daysLeft = Math.ceil((until.getTime() - now.getTime()) / DAY_MS);
  if (daysLeft > GRAPH_API_WARNING_DAYS) return undefined;
  return daysLeft <= 0
    ? `WhatsApp Cloud API: Graph API ${version} was retired by Meta on ${known.availableUntil}: sends fail; ${advice}`
    : `WhatsApp Cloud API: Graph API ${version} is retired by Meta on ${known.availableUntil} (in ${daysLeft} days); ${advice}`;
}
