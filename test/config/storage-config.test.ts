import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

describe('storage settings', () => {
  it('keeps SQLite fully synchronous unless told otherwise', () => {
    expect(loadConfig({}).storage.sqliteSynchronous).toBe('group');
    expect(loadConfig({ SQLITE_SYNCHRONOUS: 'full' }).storage.sqliteSynchronous).toBe('full');
    expect(loadConfig({ SQLITE_SYNCHRONOUS: 'NORMAL' }).storage.sqliteSynchronous).toBe('normal');
  });

  it('refuses an unknown SQLITE_SYNCHRONOUS level, naming the variable', () => {
    expect(() => loadConfig({ SQLITE_SYNCHRONOUS: 'off' })).toThrow(
      /SQLITE_SYNCHRONOUS must be one of group, full, normal/,
    );
  });
});
