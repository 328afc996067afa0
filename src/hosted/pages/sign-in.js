// The link's GET only shows this page; the token is spent by this POST, on a person's click.
const token = new URLSearchParams(location.search).get('token');
const button = document.getElementById('sign-in');
const status = document.getElementById('status');

if (token === null || token === '') {
  status.textContent = 'This link has no sign-in token. Ask your operator for a new link.';
} else {
  button.disabled = false;
  // The token stays out of the address bar (and history) once the page has read it.
  history.replaceState(null, '', location.pathname);
}

button.addEventListener('click', async () => {
  button.disabled = true;
  status.textContent = 'Signing in…';
  try {
    const response = await fetch('/api/session', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token }),
      credentials: 'same-origin',
    });
    if (response.ok) {
      status.textContent = 'Signed in.';
      location.assign('/settings/api-keys');
      return;
    }
    const body = await response.json().catch(() => null);
    status.textContent = body?.error?.message ?? `Sign-in failed (HTTP ${response.status}).`;
  } catch {
    status.textContent = 'The server could not be reached; try again.';
    button.disabled = false;
  }
});
