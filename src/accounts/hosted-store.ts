import type { AccountStore } from './account-store.ts';
import type { KeyStore } from './key-store.ts';
import type { LedgerStore } from './ledger-store.ts';
import type { SessionStore } from './session-store.ts';
import type { StoreConnection } from './store-connection.ts';
import type { UsageStore } from './usage-store.ts';

/**
 * What the hosted tier keeps, over two stores: embedded SQLite in the data dir for one machine,
 * PostgreSQL for many replicas (store/open-hosted-store.ts picks one). No HTTP here.
 *
 * Every concern of the store together (accounts, keys, sessions, the Joule ledger, usage
 * reports, the connection): what the composition roots open and hand on (src/app, the admin
 * CLI's withStore). A route or command declares only the concerns it uses, so what it can
 * reach of the store is written in its signature.
 *
 * Energy is in Joules (numbers, at most millijoule precision) at these interfaces; stores keep
 * integer millijoules so sums are exact and the usage report equals the ledger to the Joule.
 */
export interface HostedStore extends AccountStore, KeyStore, SessionStore, LedgerStore, UsageStore, StoreConnection {}
