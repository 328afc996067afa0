import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import { Kysely, sql } from 'kysely';
import { SqliteDialect } from 'kysely-sqlite';
import { PreparedQuery } from '../../../src/accounts/store/prepared-query.ts';

interface Db { t: { a: string; b: number } }

test('a prepared query binds new values in the placeholders\' positions, keeps its constants, and refuses a placeholder that is not exactly one parameter', async (t) => {
  const db = new Kysely<Db>({ dialect: new SqliteDialect({ database: new DatabaseSync(':memory:') }) });
  t.after(() => db.destroy());
  await sql`create table t (a text, b integer)`.execute(db);
  const insert = new PreparedQuery(2, ([a, b]) => db.insertInto('t').values({ a: a!, b: b as unknown as number }));
  for (const [a, b] of [['x', 1], ['y', 2], ['z', 3]] as const) await db.executeQuery(insert.bind([a, b]));
  // A constant (b > 1) stays as compiled; the placeholder takes each call's value.
  const select = new PreparedQuery(1, ([a]) => db.selectFrom('t').select(['a', 'b']).where('b', '>', 1).where('a', '!=', a!).orderBy('a'));
  const rows = async (a: string) => (await db.executeQuery(select.bind([a]))).rows.map((row) => ({ ...row }));
  assert.deepEqual(await rows('y'), [{ a: 'z', b: 3 }]);
  assert.deepEqual(await rows('z'), [{ a: 'y', b: 2 }]);
  assert.throws(() => select.bind([]), RangeError);
  // The same placeholder twice, or one that never becomes a parameter, is refused when prepared.
  assert.throws(() => new PreparedQuery(1, ([a]) => db.selectFrom('t').selectAll().where('a', '=', a!).where('a', '!=', a!)), /exactly one parameter/);
  assert.throws(() => new PreparedQuery(2, ([a]) => db.selectFrom('t').selectAll().where('a', '=', a!)), /exactly one parameter/);
});
