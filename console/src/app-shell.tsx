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
  useEffect(() => {
    const onChange = () => setHash(location.hash);
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
        <nav aria-label="Console pages">
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
