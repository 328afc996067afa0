import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { exportDeveloperKeys } from '../accounts/developer-keys/export-developer-keys.ts';
import { UserError } from '../shared/user-error.ts';
import { storeOptions, withStore, type StoreOptions } from './hosted-store-options.ts';

interface KeysExportOptions extends StoreOptions {
  account?: string;
  out?: string;
}

/**
 * Writes the file atomically (a temporary file renamed over the target), so a daemon that
 * reloads the file never reads half of it; owner-only, since key ids and accounts are private.
 */
function writeAtomically(path: string, text: string): void {
  const temporary = join(dirname(path), `.${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeFileSync(temporary, text, { mode: 0o600, flag: 'wx' });
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new UserError(`keys export: cannot write ${path} (${(error as Error).message})`, { cause: error });
  }
}

/**
 * `svc admin keys export [--account ID] [--out FILE]`: the developer-key file for
 * `svc serve --developer-keys FILE` (hashes and metadata only). Opens the store as
 * `svc hosted` does (--data-dir or --database-url). `output` is where the file goes without
 * --out, and `report` where the one-line summary goes (stderr, so stdout stays the file).
 */
export function registerKeysExport(
  admin: Command,
  io: { output?: (text: string) => void; report?: (text: string) => void } = {},
): Command {
  const output = io.output ?? ((text: string) => process.stdout.write(text));
  const report = io.report ?? ((text: string) => process.stderr.write(text));
  const keys = admin.commands.find((c) => c.name() === 'keys') ?? admin.command('keys').description('API and developer keys');
  return storeOptions(keys.command('export'))
    .description('write the developer-key file for svc serve --developer-keys: key metadata and SHA-256 hashes, never secrets')
    .addOption(new Option('--account <id>', 'only this account\'s keys [default: every account]'))
    .addOption(new Option('-o, --out <file>', 'write the file here (atomically, owner-only) [default: stdout]'))
    .action(async (options: KeysExportOptions) => {
      await withStore(options, async (store) => {
        if (options.account !== undefined && (await store.getAccount(options.account)) === undefined) {
          throw new UserError(`keys export: no account ${options.account}`, { exitCode: 2 });
        }
        const file = await exportDeveloperKeys(store, options.account);
        const text = `${JSON.stringify(file, null, 2)}\n`;
        const active = file.keys.filter((k) => k.revoked_at === null).length;
        if (options.out === undefined) {
          output(text);
        } else {
          writeAtomically(resolve(options.out), text);
        }
        report(`exported ${file.keys.length} keys (${active} active, ${file.keys.length - active} revoked)${options.out === undefined ? '' : ` to ${resolve(options.out)}`}\n`);
      }, { mustExist: true });
    });
}
