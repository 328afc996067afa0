/** Which engine a store runs on: embedded SQLite (one machine) or PostgreSQL (shared by replicas). */
export type StoreKind = 'sqlite' | 'postgres';

/** The store as a connection: its engine, whether it answers, and closing it. */
export interface StoreConnection {
  /** `sqlite` (embedded, one machine) or `postgres` (shared by replicas). */
  readonly kind: StoreKind;
  /** Whether the store answers now (usage reports say "unavailable" instead of zeros). */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}
