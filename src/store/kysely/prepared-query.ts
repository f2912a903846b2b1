/**
 * Queries built and compiled once, then run with new values.
 *
 * Kysely builds a query's operation tree and compiles it to SQL on every call. For the statements a turn runs a few
 * dozen times, that was a tenth of the server's CPU, and on SQLite each new SQL string also had to be hashed again
 * to find its prepared statement (statement-cache.ts). A prepared query is built the first time it runs on a
 * database, with a placeholder in place of each parameter, and compiled; later runs reuse that SQL and only put the
 * call's values where the placeholders were.
 *
 * The build function must use its parameters only as values (never branch on them, never put one in a literal such
 * as a LIMIT): it runs once, with placeholders, and what it builds is what every call runs. Each call must pass
 * exactly the parameters the first one did; a call with another set of keys is refused rather than half-bound.
 */
import { type Compilable, type CompiledQuery, createQueryId, type Kysely, type QueryResult } from 'kysely';
import { AppError } from '../../domain/errors.ts';
import type { Database } from './database.ts';
import { literalLimit } from './literal-limit.ts';

/** Where a compiled parameter comes from: the call's value of a named parameter, or a constant of the query. */
type Binding = { readonly name: string } | { readonly constant: unknown };

interface Template {
  readonly compiled: CompiledQuery;
  readonly names: readonly string[];
  readonly bindings: readonly Binding[];
}

const PLACEHOLDER = Symbol('prepared query parameter');

/**
 * Runs a prepared query's SQL at once, without Kysely's executor (its connection mutex, connection provider and
 * promise chain cost more than a cached SQLite statement's own run), where the store can do it safely; undefined
 * when it cannot now, and the query goes through Kysely. `inTransaction`: the caller holds an open transaction.
 */
export type DirectRunner = (
  sqlText: string,
  parameters: readonly unknown[],
  inTransaction: boolean,
) => QueryResult<unknown> | undefined;

/** Direct runners by dialect adapter: a database and its transactions share one (see `runPreparedDirectly`). */
const directRunners = new WeakMap<object, DirectRunner>();

/** Lets every prepared query on `db` and its transactions run through `runner` (SQLite, see sqlite-store.ts). */
export function runPreparedDirectly(db: Kysely<Database>, runner: DirectRunner): void {
  directRunners.set(db.getExecutor().adapter, runner);
}

interface Placeholder {
  readonly [PLACEHOLDER]: string;
}

function isPlaceholder(value: unknown): value is Placeholder {
  return typeof value === 'object' && value !== null && PLACEHOLDER in value;
}

export interface PreparedQuery<Params extends object, Row, Context = undefined, DB = Database> {
  /**
   * Runs the query on `db` (the database or an open transaction) with `params` in the placeholders' places.
   * `context` (the store's dialect, say) is handed to the build function the first time; it must be the same for
   * every call on one database.
   */
  execute(
    db: Kysely<DB>,
    params: Params,
    ...context: Context extends undefined ? [] : [Context]
  ): Promise<QueryResult<Row>>;
}

export function preparedQuery<Params extends object, Row, Context = undefined, DB = Database>(
  build: (db: Kysely<DB>, params: Params, context: Context) => Compilable<Row>,
): PreparedQuery<Params, Row, Context, DB> {
  // One template per dialect adapter: the database and its transactions share one, and so compile alike.
  const templates = new WeakMap<object, Template>();

  function compile(db: Kysely<DB>, names: string[], context: Context): Template {
    const placeholders = Object.fromEntries(
      names.map((name) => [name, Object.freeze({ [PLACEHOLDER]: name }) satisfies Placeholder]),
    ) as Params;
    const compiled = build(db, placeholders, context).compile();
    const bindings = compiled.parameters.map(
      (parameter): Binding => (isPlaceholder(parameter) ? { name: parameter[PLACEHOLDER] } : { constant: parameter }),
    );
    return { compiled, names, bindings };
  }

  return {
    execute(db, params, ...context) {
      const adapter = db.getExecutor().adapter;
      let template = templates.get(adapter);
      const keys = Object.keys(params);
      if (template === undefined) {
        try {
          template = compile(db, keys, context[0] as Context);
        } catch (error) {
          return Promise.reject(error);
        }
        templates.set(adapter, template);
      } else {
        const { names } = template;
        if (keys.length !== names.length || keys.some((key) => !names.includes(key))) {
          return Promise.reject(
            new AppError(
              'internal',
              `prepared query called with parameters [${keys.join(', ')}]; it was built with [${names.join(', ')}]`,
            ),
          );
        }
      }
      const values = params as Record<string, unknown>;
      const parameters = template.bindings.map((binding) =>
        'name' in binding ? (values[binding.name] ?? null) : binding.constant,
      );
      const direct = directRunners.get(adapter);
      if (direct !== undefined) {
        try {
          const result = direct(template.compiled.sql, parameters, db.isTransaction);
          if (result !== undefined) return Promise.resolve(result as QueryResult<Row>);
        } catch (error) {
          return Promise.reject(error);
        }
      }
      return db.executeQuery<Row>({ ...template.compiled, parameters, queryId: createQueryId() });
    },
  };
}

/** Distinct limits kept per query; past it the kept ones are dropped (a limit can come from a request). */
const MAX_LIMITS_KEPT = 32;

/**
 * Prepared queries that differ only in their LIMIT, which is written into the SQL text (literal-limit.ts): one per
 * limit value, made when first asked for. An invalid limit is refused before anything is built.
 */
export function preparedByLimit<Params extends object, Row>(
  build: (db: Kysely<Database>, params: Params, limit: ReturnType<typeof literalLimit>) => Compilable<Row>,
): (limit: number) => PreparedQuery<Params, Row> {
  const byLimit = new Map<number, PreparedQuery<Params, Row>>();
  return (limit) => {
    let query = byLimit.get(limit);
    if (query === undefined) {
      const literal = literalLimit(limit);
      query = preparedQuery((db: Kysely<Database>, params: Params) => build(db, params, literal));
      if (byLimit.size >= MAX_LIMITS_KEPT) byLimit.clear();
      byLimit.set(limit, query);
    }
    return query;
  };
}

/** The first row of a statement that always returns one (an INSERT … RETURNING), like `executeTakeFirstOrThrow`. */
export function firstRow<Row>(rows: readonly Row[]): Row {
  const [row] = rows;
  if (row === undefined) throw new AppError('internal', 'a statement expected to return a row returned none');
  return row;
}
