/** The favicon: served without the token (a 401 there is two console errors on every page), as ICO and as SVG. */
import { afterEach, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { startTestApplication } from '../support/test-application.ts';

let app: Application | undefined;

afterEach(async () => {
  await app?.stop();
});

function startApp(): Promise<Application> {
  return startTestApplication({ PROMPTPIPE_API_TOKEN: 'favicon-token' });
}

const get = (url: string) => (app as Application).server.inject({ method: 'GET', url });

describe('the favicon', () => {
  it('is served without the token, as an icon and as SVG, and linked from the pages', async () => {
    app = await startApp();
    const icon = await get('/favicon.ico');
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toBe('image/x-icon');
    // ICO header: reserved 0, type 1 (icon), one image.
    expect([...icon.rawPayload.subarray(0, 6)]).toEqual([0, 0, 1, 0, 1, 0]);
    const svg = await get('/dashboard/assets/favicon.svg');
    expect(svg.statusCode).toBe(200);
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    expect(svg.body).toMatch(/^<svg /);
    const signIn = await get('/dashboard/login');
    expect(signIn.body).toContain('<link rel="icon" href="/dashboard/assets/favicon.svg" type="image/svg+xml">');
  });
});
