import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { Lexer, type Token, type Tokens } from 'marked';

/**
 * A model's reply drawn as Markdown. Only marked's lexer is used: its tokens become Preact
 * elements here, so nothing the model wrote is ever parsed as HTML. An HTML token (`<img
 * onerror=…>`, `<script>`) is shown as the text it is; a link keeps its `href` only for
 * http(s) and mailto, so `javascript:` cannot run; images are shown as their alt text and
 * address (the console's CSP would not load them anyway). Code blocks carry a copy button.
 */
export function MarkdownView({ text }: { text: string }) {
  // The reply is re-lexed on each streamed chunk; replies are short and the lexer is fast.
  const tokens = useMemo(() => {
    const lexed = Lexer.lex(text);
    headingLevels(lexed);
    return lexed;
  }, [text]);
  return <div class="markdown">{blocks(tokens)}</div>;
}

/** The level each heading is drawn at, set by headingLevels. */
const LEVEL = new WeakMap<Token, 3 | 4 | 5 | 6>();

/**
 * A reply sits under the page's h2 ("Conversation"): its headings start at h3 and never skip a
 * level going down (a model's `#` then `###` would otherwise break the page's outline for a
 * screen reader), keeping the reply's own relative depth where it can.
 */
function headingLevels(tokens: readonly Token[]): void {
  const headings: Tokens.Heading[] = [];
  const walk = (list: readonly Token[]) => {
    for (const token of list) {
      if (token.type === 'heading') headings.push(token as Tokens.Heading);
      if (token.type === 'blockquote') walk((token as Tokens.Blockquote).tokens);
      if (token.type === 'list') for (const item of (token as Tokens.List).items) walk(item.tokens);
    }
  };
  walk(tokens);
  const top = Math.min(...headings.map((h) => h.depth));
  let previous = 2;
  for (const heading of headings) {
    const level = Math.max(3, Math.min(6, previous + 1, 3 + heading.depth - top)) as 3 | 4 | 5 | 6;
    LEVEL.set(heading, level);
    previous = level;
  }
}

const SAFE_HREF = /^(https?:|mailto:)/i;

function blocks(tokens: readonly Token[]): ComponentChildren[] {
  return tokens.map((token, i) => block(token, i));
}

function block(token: Token, key: number): ComponentChildren {
  switch (token.type) {
    case 'space':
    case 'def':
      return null;
    case 'code': {
      const code = token as Tokens.Code;
      return <CodeBlock key={key} code={code.text} lang={code.lang ?? ''} />;
    }
    case 'heading': {
      const heading = token as Tokens.Heading;
      const Tag = `h${LEVEL.get(heading) ?? 6}` as 'h3' | 'h4' | 'h5' | 'h6';
      return <Tag key={key}>{inline(heading.tokens)}</Tag>;
    }
    case 'paragraph':
      return <p key={key}>{inline((token as Tokens.Paragraph).tokens)}</p>;
    case 'blockquote':
      return <blockquote key={key}>{blocks((token as Tokens.Blockquote).tokens)}</blockquote>;
    case 'hr':
      return <hr key={key} />;
    case 'list': {
      const list = token as Tokens.List;
      const items = list.items.map((item, j) => (
        <li key={j}>{item.task && <input type="checkbox" checked={item.checked === true} disabled aria-label={item.checked === true ? 'done' : 'not done'} />}{blocks(item.tokens)}</li>
      ));
      return list.ordered ? <ol key={key} start={typeof list.start === 'number' ? list.start : 1}>{items}</ol> : <ul key={key}>{items}</ul>;
    }
    case 'table': {
      const table = token as Tokens.Table;
      return (
        <div key={key} class="table-scroll">
          <table>
            <thead><tr>{table.header.map((cell, j) => <th key={j}>{inline(cell.tokens)}</th>)}</tr></thead>
            <tbody>{table.rows.map((row, r) => <tr key={r}>{row.map((cell, j) => <td key={j}>{inline(cell.tokens)}</td>)}</tr>)}</tbody>
          </table>
        </div>
      );
    }
    case 'text': {
      // A tight list item's text: inline tokens when the lexer gave them.
      const text = token as Tokens.Text;
      return <span key={key}>{text.tokens === undefined ? text.text : inline(text.tokens)}</span>;
    }
    default:
      // 'html' and anything unknown: the model's text as text.
      return <p key={key}>{token.raw}</p>;
  }
}

function inline(tokens: readonly Token[] | undefined): ComponentChildren[] {
  return (tokens ?? []).map((token, key) => {
    switch (token.type) {
      case 'strong':
        return <strong key={key}>{inline((token as Tokens.Strong).tokens)}</strong>;
      case 'em':
        return <em key={key}>{inline((token as Tokens.Em).tokens)}</em>;
      case 'del':
        return <del key={key}>{inline((token as Tokens.Del).tokens)}</del>;
      case 'codespan':
        return <code key={key}>{(token as Tokens.Codespan).text}</code>;
      case 'br':
        return <br key={key} />;
      case 'link': {
        const link = token as Tokens.Link;
        if (!SAFE_HREF.test(link.href)) return <span key={key}>{inline(link.tokens)}</span>;
        return <a key={key} href={link.href} target="_blank" rel="noopener noreferrer">{inline(link.tokens)}</a>;
      }
      case 'image': {
        const image = token as Tokens.Image;
        return <span key={key} class="muted">[image: {image.text || 'no description'} · {image.href}]</span>;
      }
      case 'text': {
        const text = token as Tokens.Text;
        return text.tokens === undefined ? text.text : <span key={key}>{inline(text.tokens)}</span>;
      }
      case 'escape':
        return (token as Tokens.Escape).text;
      default:
        // Inline 'html' (`<img src=x onerror=…>`) and anything unknown: shown, never parsed.
        return token.raw;
    }
  });
}

function CodeBlock({ code, lang }: { code: string; lang: string }) {
  const [status, setStatus] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(code);
      setStatus('Copied.');
    } catch {
      setStatus('The browser refused the clipboard; select the code and copy it.');
    }
  };
  return (
    <figure class="code-block">
      <figcaption>
        <span class="muted">{lang === '' ? 'code' : lang}</span>
        <button type="button" class="copy-code" onClick={copy}>Copy code</button>
        <span role="status" class="muted">{status}</span>
      </figcaption>
      <pre tabIndex={0}><code>{code}</code></pre>
    </figure>
  );
}
