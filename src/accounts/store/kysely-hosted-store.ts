import type { Kysely } from 'kysely';
import type { HostedStore } from '../hosted-store.ts';
import type { StoreKind } from '../store-connection.ts';
import type { HostedDatabase } from './hosted-database.ts';
import { KyselyAccountStore } from './kysely-account-store.ts';
import { KyselyKeyStore } from './kysely-key-store.ts';
import { KyselyLedgerStore } from './kysely-ledger-store.ts';
import { KyselySessionStore } from './kysely-session-store.ts';
import { KyselyUsageStore } from './kysely-usage-store.ts';
import { StoreHandle, type StoreHandleOptions } from './store-handle.ts';

/**
 * The HostedStore over Kysely: the same queries for SQLite and PostgreSQL (open-hosted-store.ts
 * builds the Kysely instance, runs the migrations and picks `kind`). Each concern is a store of
 * its own over one shared handle (the database, the hot path's prepared queries, the embedded
 * store's writer thread); this puts them together as the one object the composition roots hold.
 */
export function kyselyHostedStore(db: Kysely<HostedDatabase>, kind: StoreKind, options: StoreHandleOptions = {}): HostedStore {
  const handle = new StoreHandle(db, kind, options);
  const accounts = new KyselyAccountStore(handle);
  const ledger = new KyselyLedgerStore(handle);
  // A key check's allowance goes to the ledger, which may spare the request's reservation a read.
  const keys = new KyselyKeyStore(handle, { accounts, onAllowanceRead: (allowance, figures) => ledger.rememberAllowance(allowance, figures) });
  const sessions = new KyselySessionStore(handle, accounts);
  const usage = new KyselyUsageStore(handle);
  return {
    kind,

    createAccount: (input) => accounts.createAccount(input),
    getAccount: (accountId) => accounts.getAccount(accountId),
    listAccounts: () => accounts.listAccounts(),
    setPlan: (accountId, plan) => accounts.setPlan(accountId, plan),
    disableAccount: (accountId) => accounts.disableAccount(accountId),
    enableAccount: (accountId) => accounts.enableAccount(accountId),

    issueKey: (accountId, input) => keys.issueKey(accountId, input),
    issueKeyWithinCap: (accountId, input) => keys.issueKeyWithinCap(accountId, input),
    listKeys: (accountId) => keys.listKeys(accountId),
    revokeKey: (accountId, keyId) => keys.revokeKey(accountId, keyId),
    listKeyHashes: (accountId) => keys.listKeyHashes(accountId),
    checkKey: (secret) => keys.checkKey(secret),

    createSignInToken: (accountId, ttlMs) => sessions.createSignInToken(accountId, ttlMs),
    redeemSignInToken: (token, sessionTtlMs) => sessions.redeemSignInToken(token, sessionTtlMs),
    checkSession: (token) => sessions.checkSession(token),
    endSession: (token) => sessions.endSession(token),
    revokeSessions: (accountId) => sessions.revokeSessions(accountId),

    allowance: (accountId, at) => ledger.allowance(accountId, at),
    reserveJoules: (input) => ledger.reserveJoules(input),
    releaseReservation: (reservation) => ledger.releaseReservation(reservation),
    recordCharge: (input) => ledger.recordCharge(input),
    findEvidence: (accountId, evidenceId) => ledger.findEvidence(accountId, evidenceId),
    findByIdempotencyKey: (accountId, idempotencyKey) => ledger.findByIdempotencyKey(accountId, idempotencyKey),
    releaseIdempotencyKeys: (before) => ledger.releaseIdempotencyKeys(before),

    usage: (query) => usage.usage(query),
    ledgerTotal: (accountId, month) => usage.ledgerTotal(accountId, month),

    ping: () => handle.ping(),
    close: () => handle.close(),
  };
}
