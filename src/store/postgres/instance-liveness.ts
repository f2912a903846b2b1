/**
 * Instance liveness on PostgreSQL: every instance holds, on its coordination connection, a session-level advisory lock
 * on its job lease owner name for its whole life (`postgres-coordinator.ts`). PostgreSQL drops the lock the moment that
 * session ends, so "no such lock is granted" means the owner is dead: its process exited, was killed, or lost its
 * coordination connection (and then exits at once). Owner names carry a random suffix, so a dead owner never comes
 * back to life under a restarted instance.
 *
 * Keys are `(hashtext(schema), hashtext('instance:' || owner))`. A hash collision between two owners can only make a
 * dead one look alive (its jobs then wait for their lease, as before), never a live one look dead.
 */

/** The text hashed into the second key of an owner's liveness lock. */
export function livenessLockName(owner: string): string {
  return `instance:${owner}`;
}

/**
 * SQL: true while the instance owning `ownerColumn` holds its liveness lock; `schemaParameter` is the placeholder of the
 * current schema. Two-int advisory locks appear in `pg_locks` as classid = key 1, objid = key 2 (as unsigned oids),
 * objsubid 2.
 */
export function ownerIsAliveSql(ownerColumn: string, schemaParameter: string): string {
  return `exists (
    select 1 from pg_locks l
     where l.locktype = 'advisory' and l.granted and l.objsubid = 2
       and l.database = (select oid from pg_database where datname = current_database())
       and l.classid = (hashtext(${schemaParameter})::bigint & 4294967295)::oid
       and l.objid = (hashtext('instance:' || ${ownerColumn})::bigint & 4294967295)::oid)`;
}

/**
 * Puts the running jobs of dead owners back to pending, due as they were, so any instance claims them now instead of
 * when their lease runs out; $1 is the schema, $2 the time written as `updated_at`. Attempts are kept: the claim that
 * takes the job counts one more, so a job that kills every process running it is still given up after its attempts.
 * Rows another transaction has locked (a claim in progress) are skipped, never waited for: the coordination
 * connection that runs this must not stall.
 */
export const RELEASE_ABANDONED_JOBS_SQL = `
  with released as (
    update jobs set status = 'pending', lease_owner = null, lease_until = null, updated_at = $2
     where id in (
       select id from jobs
        where status = 'running' and not ${ownerIsAliveSql('jobs.lease_owner', '$1')}
        for update skip locked)
       and status = 'running'
    returning id
  )
  select count(*)::int as count from released`;
