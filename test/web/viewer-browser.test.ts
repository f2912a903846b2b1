/**
 * A viewer in a real browser (Chromium): signs in with e-mail and password through the form, opens every page the
 * navigation offers and the participant's page, and never sees the participant's phone number or name in the page's
 * text or HTML; the tokens page is theirs, the users and audit pages are refused. A coordinator's browser, for
 * contrast, sees the number.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Application } from '../../src/main.ts';
import { createStaffService } from '../../src/staff/staff-service.ts';
import { startTestApplication } from '../support/test-application.ts';
import { browserAvailability, launchChromium } from './browser.ts';

const API_TOKEN = 'viewer-browser-token';
const PASSWORD = 'quiet reading all day';
const PHONE = '+15552223333';
const WAIT = { timeout: 30_000 };
const availability = browserAvailability();

describe.skipIf(!availability.run)('a viewer in Chromium', () => {
  let app: Application;
  let browser: Browser;
  let baseUrl: string;
  let participantId: string;

  beforeAll(async () => {
    app = await startTestApplication({ PROMPTPIPE_API_TOKEN: API_TOKEN }, { start: false });
    await app.start({ listen: true });
    const address = app.server.addresses()[0];
    if (!address || typeof address === 'string') throw new Error('the server is not listening on a TCP port');
    baseUrl = `http://127.0.0.1:${address.port}`;
    const accounts = createStaffService({ staff: app.store.staff, now: () => new Date() });
    for (const role of ['viewer', 'coordinator'] as const) {
      await accounts.createWithPassword({
        email: `${role}@study.example`,
        displayName: role,
        role,
        password: PASSWORD,
      });
    }
    const enrolled = await app.server.inject({
      method: 'POST',
      url: '/conversation/participants',
      headers: { authorization: `Bearer ${API_TOKEN}` },
      payload: { phone_number: PHONE, name: 'Katherine Johnson' },
    });
    participantId = enrolled.json().result.id;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.stop();
  }, 60_000);

  async function signedIn(email: string): Promise<Page> {
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${baseUrl}/dashboard`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Participants' }).waitFor(WAIT);
    return page;
  }

  it('never shows a viewer the phone number or the name, on any page it can open', async () => {
    const page = await signedIn('viewer@study.example');
    const visited: string[] = [];
    const links: string[] = [];
    for (const link of await page.locator('header nav a').all()) links.push((await link.getAttribute('href')) ?? '');
    for (const path of [...links, `/dashboard/participants/${participantId}`]) {
      const response = await page.goto(`${baseUrl}${path}`);
      visited.push(`${path} ${response?.status()}`);
      const html = await page.content();
      expect(html, path).not.toContain(PHONE);
      expect(html, path).not.toContain('5552223333');
      expect(html, path).not.toContain('Katherine');
    }
    expect(visited).toContain(`/dashboard/participants/${participantId} 200`);
    expect(visited).toContain('/dashboard/tokens 200');
    await page.goto(`${baseUrl}/dashboard/participants/${participantId}`);
    await page.getByText('+1555•••3333').first().waitFor(WAIT);
    expect((await page.goto(`${baseUrl}/dashboard/audit`))?.status()).toBe(403);
    expect((await page.goto(`${baseUrl}/dashboard/users`))?.status()).toBe(403);
  }, 120_000);

  it('shows a coordinator the number', async () => {
    const page = await signedIn('coordinator@study.example');
    await page.goto(`${baseUrl}/dashboard/participants/${participantId}`);
    await page.getByText(PHONE).first().waitFor(WAIT);
  }, 120_000);
});
