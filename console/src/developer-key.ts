/**
 * The developer key the console sends when the daemon runs with `--require-developer-key`.
 * Kept in sessionStorage: it lasts while this tab is open (reloads included) and is gone when
 * the tab closes; it is never written to localStorage or a cookie, so no other tab, later
 * session or request the page does not make itself carries it.
 */
const STORAGE_KEY = 'svc.developerKey';

/** Fired on `window` when the daemon refused a request for want of a (valid) developer key. */
export const KEY_REQUIRED_EVENT = 'svc:developer-key-required';

export interface KeyRequiredDetail {
  code: string;
  message: string;
}

export function developerKey(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY);
  } catch {
    // Storage can be disabled by the browser's settings: then there is simply no key.
    return null;
  }
}

export function setDeveloperKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(STORAGE_KEY);
  else sessionStorage.setItem(STORAGE_KEY, key);
}

/** `Authorization: Bearer <key>` when a key was given, else nothing (the daemon then serves anonymously, or refuses). */
export function authorizationHeader(): Record<string, string> {
  const key = developerKey();
  return key === null ? {} : { authorization: `Bearer ${key}` };
}

/** The daemon's codes for a missing, wrong or revoked developer key (src/runtime/developer-key-guard.ts). */
export function isDeveloperKeyRefusal(status: number, code: string | null): boolean {
  return status === 401 && code !== null && code.startsWith('developer_key_');
}
