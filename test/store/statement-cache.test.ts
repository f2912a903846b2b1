import SqliteDatabase from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { withStatementCache } from '../../src/store/sqlite/statement-cache.ts';

describe('SQLite statement cache', () => {
  const database = new SqliteDatabase(':memory:');
  database.exec('create table numbers (value integer)');
  database.exec('insert into numbers (value) values (1), (2), (3)');

  it('hands back the same prepared statement for the same SQL text', () => {
    const cached = withStatementCache(database);
    const first = cached.prepare('select value from numbers order by value');
    const second = cached.prepare('select value from numbers order by value');
    expect(second).toBe(first);
    expect(second.all([])).toEqual([{ value: 1 }, { value: 2 }, { value: 3 }]);
  });

  it('prepares a fresh statement while the cached one is still being iterated (a streamed select)', () => {
    const cached = withStatementCache(database);
    const sqlText = 'select value from numbers where value >= ? order by value';
    const streaming = cached.prepare(sqlText);
    const iterator = streaming.iterate([1]);
    expect(iterator.next().value).toEqual({ value: 1 });
    const meanwhile = cached.prepare(sqlText);
    expect(meanwhile).not.toBe(streaming);
    expect(meanwhile.all([3])).toEqual([{ value: 3 }]);
    expect([...iterator]).toEqual([{ value: 2 }, { value: 3 }]);
  });

  it('hands back the cached statement again once a stream over it ended, finished or left early', () => {
    const cached = withStatementCache(database);
    const sqlText = 'select value from numbers where value >= ? order by value';
    const statement = cached.prepare(sqlText);
    expect([...statement.iterate([2])]).toEqual([{ value: 2 }, { value: 3 }]);
    expect(cached.prepare(sqlText)).toBe(statement);
    for (const row of statement.iterate([1])) {
      expect(row).toEqual({ value: 1 });
      break;
    }
    expect(cached.prepare(sqlText)).toBe(statement);
    expect(statement.all([3])).toEqual([{ value: 3 }]);
  });

  it('tells whether a stream is open, which better-sqlite3 lets no write run beside', () => {
    const cached = withStatementCache(database);
    const iterator = cached.prepare('select value from numbers order by value').iterate([]);
    expect(cached.streaming()).toBe(false);
    expect(iterator.next().value).toEqual({ value: 1 });
    expect(cached.streaming()).toBe(true);
    expect(() => cached.prepare('insert into numbers (value) values (4)').run([])).toThrow(/busy/);
    expect([...iterator]).toEqual([{ value: 2 }, { value: 3 }]);
    expect(cached.streaming()).toBe(false);
    const early = cached.prepare('select value from numbers order by value').iterate([]);
    early.next();
    early.return?.();
    expect(cached.streaming()).toBe(false);
  });

  it('drops the least recently used statement past its capacity', () => {
    const cached = withStatementCache(database, { capacity: 2 });
    const one = cached.prepare('select 1 as n');
    const two = cached.prepare('select 2 as n');
    expect(cached.prepare('select 1 as n')).toBe(one);
    cached.prepare('select 3 as n');
    expect(cached.prepare('select 1 as n')).toBe(one);
    expect(cached.prepare('select 2 as n')).not.toBe(two);
  });

  it('keeps the statement it just prepared, even when every older one was used since', () => {
    const cached = withStatementCache(database, { capacity: 2 });
    const one = cached.prepare('select 1 as n');
    const two = cached.prepare('select 2 as n');
    cached.prepare('select 1 as n');
    cached.prepare('select 2 as n');
    const three = cached.prepare('select 3 as n');
    expect(cached.prepare('select 3 as n')).toBe(three);
    // Both older ones were passed over once; the oldest of them made room.
    expect(cached.prepare('select 2 as n')).toBe(two);
    expect(cached.prepare('select 1 as n')).not.toBe(one);
    expect(cached.prepare('select 3 as n').all([])).toEqual([{ n: 3 }]);
  });
});
