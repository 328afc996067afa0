import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/shared/api-error.ts';
import { filenameExtension, filenameProblem, validateDocumentSource, validateUploadFilename } from '../../src/spaces/upload-filename.ts';

const refused = (fn: () => unknown, param: string) =>
  assert.throws(fn, (e: unknown) => e instanceof ApiError && e.status === 400 && e.code === 'invalid_filename' && e.param === param);

test('upload filenames: ordinary names and relative folder paths are labels; traversal, absolute paths and controls are refused', () => {
  for (const ok of ['report.pdf', 'Quarterly Report (final).docx', 'notes/2024/plan.md', 'ünïcödé 日本.txt', '.env.example', 'a..b.txt', 'x']) {
    assert.equal(validateUploadFilename(ok), ok);
  }
  const bad = [
    '../x', '..\\x', 'a/../../b', 'a\\..\\b', '..', '/etc/passwd', '\\\\server\\share\\x.txt', 'C:\\Users\\me\\x.txt', 'c:/x.txt',
    '~/notes.md', 'notes\u0000.txt', 'line\nbreak.txt', 'tab\there.txt', 'esc\u001b[31m.txt', 'del\u007f.txt', 'c1\u0085.txt',
    'invoice\u202efdp.exe', 'iso\u2066late.txt', '', '   ', 'folder/', 'folder/.', 'x'.repeat(1025), `${'y'.repeat(256)}.txt`,
  ];
  for (const name of bad) refused(() => validateUploadFilename(name), 'filename');
  assert.match(filenameProblem('../x')!, /climbs out/);
  assert.match(filenameProblem('/abs')!, /absolute/);
  assert.equal(filenameProblem('ok.txt'), null);
  // The message shows the name with its invisible characters spelled out, never raw.
  assert.throws(
    () => validateUploadFilename('evil\u202e\u0007.txt'),
    (error: unknown) => error instanceof ApiError && !/[\u0000-\u001f\u202e]/u.test(error.message) && error.message.includes('\\u202e'),
  );
});

test('document sources: URLs of any scheme are labels, anything else is held to the filename rules', () => {
  for (const ok of ['https://example.com/a/../b.pdf', 'http://localhost:8080/x', 's3://bucket/key.md', 'doi:10.1000/182', 'notes/plan.md']) {
    assert.equal(validateDocumentSource(ok), ok);
  }
  for (const bad of ['../secrets.txt', '/home/me/x.md', 'C:\\x.md', 'https://example.com/\u0000', `https://example.com/${'p'.repeat(1100)}`]) {
    refused(() => validateDocumentSource(bad), 'source');
  }
  refused(() => validateDocumentSource('../x', 'metadata.source'), 'metadata.source');
});

test('filename extensions: the last part, lower-cased; none for dotfiles and bare names', () => {
  assert.equal(filenameExtension('Report.PDF'), 'pdf');
  assert.equal(filenameExtension('dir.v2/readme'), '');
  assert.equal(filenameExtension('.bashrc'), '');
  assert.equal(filenameExtension('archive.tar.gz'), 'gz');
  assert.equal(filenameExtension('C:\\docs\\a.Md'), 'md');
});
