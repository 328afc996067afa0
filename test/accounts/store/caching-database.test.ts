import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CachingDatabase } from '../../../src/accounts/store/caching-database.ts';

test('a statement is prepared once per SQL text and reused; the cache drops the least recently used past its limit', () => {
  const db = new CachingDatabase(':memory:', 2);
  db.exec('create table t (v integer)');
  const insert = db.prepare('insert into t (v) values (?)');
  assert.equal(db.prepare('insert into t (v) values (?)'), insert, 'same text, same statement');
  for (let i = 0; i < 5; i++) db.prepare('insert into t (v) values (?)').run(i);
  const count = db.prepare('select count(*) as n from t');
  assert.deepEqual({ ...count.get() }, { n: 5 }, 'a reused statement runs each time (reset after use)');
  assert.deepEqual({ ...db.prepare('select count(*) as n from t').get() }, { n: 5 });
  db.prepare('insert into t (v) values (?)'); // the insert is now the most recent
  db.prepare('select 1'); // over the limit: the count statement, least recently used, goes
  assert.equal(db.cachedStatements, 2);
  assert.equal(db.prepare('insert into t (v) values (?)'), insert, 'the recently used one stayed');
  assert.notEqual(db.prepare('select count(*) as n from t'), count, 'the dropped one is prepared again');
  db.close();
});
