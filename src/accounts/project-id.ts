/**
 * What a project id may be, wherever one comes in: the `x-svc-project-id` header (the hosted
 * routes, the local runtime's developer-key guard) and a key's own project (`POST /api/keys`),
 * one rule so a key's project can always be sent as the header and lands in the same ledger
 * column. Printable ASCII without spaces: it is echoed in headers and logs as it is.
 */
export const PROJECT_ID = /^[\x21-\x7e]{1,128}$/;

/** The rule in words, for the errors that refuse one. */
export const PROJECT_ID_RULE = '1 to 128 printable characters without spaces';
