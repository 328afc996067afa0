import { accessSync, constants } from 'node:fs';

/**
 * Why the disk-full tests cannot run on this machine, or false when they can: they write through
 * a link to /dev/full, which must exist and be writable by this user. Linux makes it 0666, but
 * some images make it root's only, and macOS has none.
 */
export function devFullUnavailable(): string | false {
  try {
    accessSync('/dev/full', constants.W_OK);
    return false;
  } catch (error) {
    return `/dev/full is not writable by this user here (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
  }
}
