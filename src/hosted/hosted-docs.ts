import { readFileSync } from 'node:fs';
import { Marked, type Tokens } from 'marked';

const DOCS_FILE = new URL('../../docs/hosted.md', import.meta.url);

/** A heading's id: its text, lower-cased, with runs of anything but letters, digits and `_` as one `-`. */
export function headingId(text: string): string {
  return text.toLowerCase().replace(/<[^>]*>/g, '').replace(/[^a-z0-9_]+/g, '-').replace(/^-+|-+$/g, '');
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/**
 * docs/hosted.md as one HTML page, every heading with an id (so `docs_url` anchors such as
 * `#svc_api_key_required` land on their section). The markdown is ours, read from the install.
 */
export function renderHostedDocs(markdown: string = readFileSync(DOCS_FILE, 'utf8')): string {
  const marked = new Marked({
    gfm: true,
    renderer: {
      heading(this: { parser: { parseInline(tokens: Tokens.Generic[]): string } }, { tokens, depth, text }: Tokens.Heading): string {
        return `<h${depth} id="${escapeHtml(headingId(text.replace(/`/g, '')))}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
    },
  });
  const body = marked.parse(markdown, { async: false });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>svc hosted API</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem}code{background:#f3f3f3;padding:0 .2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em}:target{background:#fff3c4}</style>
</head><body>
${body}</body></html>
`;
}
