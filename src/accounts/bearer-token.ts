/** Longest Authorization value read; real keys are far shorter, and the store never hashes megabytes. */
const MAX_AUTHORIZATION_CHARS = 512;

/** The bearer token of `Authorization: Bearer <key>` (scheme case-insensitive, RFC 9110), or undefined. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string' || header.length > MAX_AUTHORIZATION_CHARS) return undefined;
  const match = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}
