/** The start-up warning about the Graph API version (graph-api-versions.ts), against Meta's published end dates. */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WHATSAPP_CLOUD_API_URL,
  GRAPH_API_VERSIONS,
  graphApiVersionOf,
  graphApiVersionWarning,
} from '../../../src/channels/whatsapp-cloud/graph-api-versions.ts';

const url = (version: string) => `https://graph.facebook.com/${version}`;

describe('Graph API versions', () => {
  it('defaults to a version Meta serves until 2028, whose end date it has published', () => {
    expect(DEFAULT_WHATSAPP_CLOUD_API_URL).toBe('https://graph.facebook.com/v25.0');
    const entry = GRAPH_API_VERSIONS.find((candidate) => candidate.version === 'v25.0');
    expect(entry?.availableUntil).toBe('2028-07-29');
    expect(graphApiVersionWarning(DEFAULT_WHATSAPP_CLOUD_API_URL, new Date('2028-04-29T00:00:00Z'))).toBeUndefined();
  });

  it('warns within 90 days of the end date, and once it is past', () => {
    // v21.0 is available until 21 January 2027.
    expect(graphApiVersionWarning(url('v21.0'), new Date('2026-10-22T00:00:00Z'))).toBeUndefined();
    expect(graphApiVersionWarning(url('v21.0'), new Date('2026-10-24T00:00:00Z'))).toMatch(
      /v21\.0 is retired by Meta on 2027-01-21 \(in 89 days\).*WHATSAPP_CLOUD_API_URL.*v25\.0/,
    );
    expect(graphApiVersionWarning(url('v21.0'), new Date('2027-01-21T00:00:00Z'))).toMatch(
      /v21\.0 was retired by Meta on 2027-01-21: sends fail/,
    );
  });

  it('warns about a version older than any it knows; not about a newer one, or a URL without a version', () => {
    expect(graphApiVersionWarning(url('v17.0'), new Date('2026-01-01T00:00:00Z'))).toMatch(/older than v19\.0/);
    expect(graphApiVersionWarning(url('v27.0'), new Date('2026-01-01T00:00:00Z'))).toBeUndefined();
    expect(graphApiVersionWarning('https://proxy.example.org/graph', new Date())).toBeUndefined();
    expect(graphApiVersionOf('http://127.0.0.1:9999/v24.0/')).toBe('v24.0');
  });
});
