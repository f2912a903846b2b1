/** `NODE_USE_ENV_PROXY`: config.ts reads the proxy variables (the HTTP client reads nothing from the environment). */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('the outbound proxy', () => {
  it('is off unless NODE_USE_ENV_PROXY asks for it, whatever proxy variables are set', () => {
    expect(loadConfig({}).http.proxy).toBeUndefined();
    expect(loadConfig({ HTTPS_PROXY: 'http://proxy:3128' }).http.proxy).toBeUndefined();
    expect(loadConfig({ NODE_USE_ENV_PROXY: '0', HTTPS_PROXY: 'http://proxy:3128' }).http.proxy).toBeUndefined();
  });

  it('takes the proxies and exceptions, the lower-case spelling first', () => {
    const config = loadConfig({
      NODE_USE_ENV_PROXY: '1',
      HTTPS_PROXY: 'http://upper:3128',
      https_proxy: 'http://lower:3128',
      NO_PROXY: 'localhost,.internal',
    });
    expect(config.http.proxy).toEqual({
      httpProxy: '',
      httpsProxy: 'http://lower:3128',
      noProxy: 'localhost,.internal',
    });
  });

  it('refuses a proxy that is not an http(s) URL, or none at all', () => {
    expect(() => loadConfig({ NODE_USE_ENV_PROXY: '1', HTTP_PROXY: 'socks5://proxy:1080' })).toThrow(
      /HTTP_PROXY must be an http\(s\) URL \(got "socks5:\/\/proxy:1080"\)/,
    );
    expect(() => loadConfig({ NODE_USE_ENV_PROXY: '1' })).toThrow(/neither HTTP_PROXY nor HTTPS_PROXY names a proxy/);
  });

  it('does not report other programs’ NODE_* and proxy variables as settings set but not read', () => {
    const config = loadConfig({
      NODE_USE_ENV_PROXY: '1',
      HTTP_PROXY: 'http://proxy:3128',
      NODE_ENV: 'production',
      NODE_OPTIONS: '--max-old-space-size=512',
    });
    expect(config.startupNotes).toEqual([]);
  });
});
