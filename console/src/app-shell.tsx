import { useEffect, useState } from 'preact/hooks';
import type { ComponentType } from 'preact';
import { RuntimePage } from './pages/runtime-page.tsx';
import { ChatPage } from './pages/chat-page.tsx';
import { RouteSolverPage } from './pages/route-solver-page.tsx';
import { PortfolioSolverPage } from './pages/portfolio-solver-page.tsx';
import { SpacesPage } from './pages/spaces-page.tsx';
import { GroverSolverPage } from './pages/grover-solver-page.tsx';
import { ClusteringSolverPage } from './pages/clustering-solver-page.tsx';
import { ClassificationSolverPage } from './pages/classification-solver-page.tsx';
import { DeveloperKeyPrompt } from './developer-key-prompt.tsx';
import { ConnectionBanner } from './connection-banner.tsx';
import { startConnectionProbe, useConnection } from './connection-state.ts';
import { apiUrl } from './api-client.ts';

interface PageEntry {
  hash: string;
  title: string;
  component: ComponentType;
}

/**
 * Pages are addressed by the URL fragment (`#/chat`), so the daemon serves one index.html and
 * needs no catch-all route that would answer every unknown path with a page instead of a 404.
 */
const PAGES: readonly PageEntry[] = [
  { hash: '#/', title: 'Runtime', component: RuntimePage },
  { hash: '#/chat', title: 'Chat', component: ChatPage },
  { hash: '#/spaces', title: 'Spaces', component: SpacesPage },
  { hash: '#/solve/routes', title: 'Route solver', component: RouteSolverPage },
  { hash: '#/solve/portfolio', title: 'Portfolio solver', component: PortfolioSolverPage },
  { hash: '#/solve/grover', title: 'Grover search', component: GroverSolverPage },
  { hash: '#/solve/clustering', title: 'Clustering', component: ClusteringSolverPage },
  { hash: '#/solve/classification', title: 'Classification', component: ClassificationSolverPage },
];

function pageFor(hash: string): PageEntry {
  return PAGES.find((p) => p.hash === hash) ?? PAGES[0]!;
}

export function AppShell() {
  const [hash, setHash] = useState(location.hash);
  // On a narrow screen the page list folds behind a Menu button (see console.css); choosing a
  // page folds it again.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => {
    const onChange = () => {
      setHash(location.hash);
      setMenuOpen(false);
    };
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  const page = pageFor(hash);
  useEffect(() => {
    document.title = `${page.title} · svc console`;
  }, [page]);
  const Page = page.component;
  const connection = useConnection();
  useEffect(() => startConnectionProbe(() => apiUrl('/health')), []);
  return (
    <>
      <header class="top">
        <span class="brand">svc</span>
        <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="console-pages" onClick={() => setMenuOpen(!menuOpen)}
          onKeyDown={(event) => { if (event.key === 'Escape') setMenuOpen(false); }}>
          <span aria-hidden="true">☰</span> Menu<span class="current-page">: {page.title}</span>
        </button>
        <nav id="console-pages" aria-label="Console pages" class={menuOpen ? 'open' : undefined}
          onKeyDown={(event) => { if (event.key === 'Escape') setMenuOpen(false); }}>
          {PAGES.map((p) => (
            <a href={p.hash} aria-current={p === page ? 'page' : undefined}>{p.title}</a>
          ))}
        </nav>
      </header>
      <main id="page">
        <DeveloperKeyPrompt />
        <ConnectionBanner />
        <h1>{page.title}</h1>
        {/* While the daemon does not answer, what the page shows is from before: greyed, and marked for assistive tech. */}
        <div id="page-body" class={connection.reachable ? undefined : 'stale'} data-stale={connection.reachable ? undefined : 'true'}>
          <Page />
        </div>
      </main>
    </>
  );
}
