import { open, readFile } from 'node:fs/promises';
import { PRIVATE_FILE_MODE } from '../shared/private-files.ts';
import { fsError, removeQuietly } from './partial-download.ts';
import { PullError } from './pull-error.ts';

/**
 * A lock beside the partial so two pulls of the same file never interleave their bytes. It holds
 * the owner's pid; a lock whose process is gone (a pull killed with SIGKILL) is taken over.
 */
export async function acquireDownloadLock(path: string, what: string): Promise<() => Promise<void>> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx', PRIVATE_FILE_MODE);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => removeQuietly(path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw fsError(error, path, 'creating');
      const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
      if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new PullError('busy', `another svc (pid ${pid}) is downloading ${what}; wait for it or stop it`);
      }
      await removeQuietly(path);
    }
  }
  throw new PullError('busy', `cannot take the download lock ${path}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
