import type { Account, AccountStore } from '../account-store.ts';
import type { Session, SessionStore } from '../session-store.ts';
import { newId } from '../../shared/new-id.ts';
import { accountColumns, toAccount } from './account-rows.ts';
import { requireTtl } from './require-ttl.ts';
import { hashSecret, looksLikeSessionToken, looksLikeToken, newSessionToken, randomToken, sameHash } from './store-secrets.ts';
import type { StoreHandle } from './store-handle.ts';
import { UnknownAccountError } from './unknown-account-error.ts';
import { AccountDisabledError } from './account-disabled-error.ts';

/** Sign-in links and sessions over Kysely, the same queries on SQLite and PostgreSQL. */
export class KyselySessionStore implements SessionStore {
  readonly #handle: StoreHandle;
  /** Where a sign-in link's account is looked up (it must exist and be enabled). */
  readonly #accounts: Pick<AccountStore, 'getAccount'>;

  constructor(handle: StoreHandle, accounts: Pick<AccountStore, 'getAccount'>) {
    this.#handle = handle;
    this.#accounts = accounts;
  }

  async createSignInToken(accountId: string, ttlMs: number): Promise<{ token: string; expiresAt: Date }> {
    requireTtl(ttlMs, 'ttlMs');
    const account = await this.#accounts.getAccount(accountId);
    if (account === undefined) throw new UnknownAccountError(accountId);
    if (account.disabledAt !== null) throw new AccountDisabledError(accountId);
    const now = Date.now();
    // Sign-in links are an operator action, rare enough to sweep expired credentials here.
    await this.#handle.db.deleteFrom('sign_in_tokens').where('expires_at', '<=', now).execute();
    await this.#handle.db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
    const token = randomToken();
    const expiresAt = now + ttlMs;
    await this.#handle.db.insertInto('sign_in_tokens').values({ token_hash: hashSecret(token), account_id: accountId, created_at: now, expires_at: expiresAt, used_at: null }).execute();
    return { token, expiresAt: new Date(expiresAt) };
  }

  async redeemSignInToken(token: string, sessionTtlMs: number): Promise<{ session: Session; token: string } | undefined> {
    requireTtl(sessionTtlMs, 'sessionTtlMs');
    if (typeof token !== 'string' || !looksLikeToken(token)) return undefined;
    const hash = hashSecret(token);
    return this.#handle.db.transaction().execute(async (trx) => {
      const now = Date.now();
      // One conditional update is the one-time guarantee: of two concurrent redeems, the second
      // finds used_at set (PostgreSQL re-checks the row after the first commits) and gets nothing.
      const used = await trx
        .updateTable('sign_in_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', hash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', now)
        // A link of a disabled account signs nobody in (disabling deletes them too; this covers a race).
        .where((eb) => eb.not(eb.exists(eb.selectFrom('accounts').select('accounts.id').whereRef('accounts.id', '=', 'sign_in_tokens.account_id').where('accounts.disabled_at', 'is not', null))))
        .returning(['account_id', 'token_hash'])
        .executeTakeFirst();
      if (used === undefined || !sameHash(used.token_hash, hash)) return undefined;
      const sessionToken = newSessionToken();
      const session: Session = { id: newId('sess_'), accountId: used.account_id, createdAt: new Date(now), expiresAt: new Date(now + sessionTtlMs) };
      await trx
        .insertInto('sessions')
        .values({ id: session.id, token_hash: hashSecret(sessionToken), account_id: session.accountId, created_at: now, expires_at: now + sessionTtlMs })
        .execute();
      return { session, token: sessionToken };
    });
  }

  async checkSession(token: string): Promise<{ session: Session; account: Account } | undefined> {
    if (typeof token !== 'string' || !looksLikeSessionToken(token)) return undefined;
    const hash = hashSecret(token);
    const row = await this.#handle.db
      .selectFrom('sessions')
      .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
      .select(['sessions.id as session_id', 'sessions.token_hash', 'sessions.created_at as session_created_at', 'sessions.expires_at', ...accountColumns])
      .where('sessions.token_hash', '=', hash)
      .where('sessions.expires_at', '>', Date.now())
      // Disabling deletes the account's sessions; this also refuses one made in a race with it.
      .where('accounts.disabled_at', 'is', null)
      .executeTakeFirst();
    if (row === undefined || !sameHash(row.token_hash, hash)) return undefined;
    return {
      session: { id: row.session_id, accountId: row.id, createdAt: new Date(Number(row.session_created_at)), expiresAt: new Date(Number(row.expires_at)) },
      account: toAccount(row),
    };
  }

  async endSession(token: string): Promise<void> {
    if (typeof token !== 'string' || !looksLikeSessionToken(token)) return;
    await this.#handle.db.deleteFrom('sessions').where('token_hash', '=', hashSecret(token)).execute();
  }

  async revokeSessions(accountId: string): Promise<{ sessions: number; signInLinks: number }> {
    return this.#handle.db.transaction().execute(async (trx) => {
      const sessions = await trx.deleteFrom('sessions').where('account_id', '=', accountId).executeTakeFirst();
      const links = await trx.deleteFrom('sign_in_tokens').where('account_id', '=', accountId).where('used_at', 'is', null).executeTakeFirst();
      return { sessions: Number(sessions.numDeletedRows), signInLinks: Number(links.numDeletedRows) };
    });
  }
}
