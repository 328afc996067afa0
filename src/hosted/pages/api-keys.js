// The key page: vanilla JS against /api/keys with the session cookie (same origin, JSON bodies).
const $ = (id) => document.getElementById(id);
const errorLine = $('error');

async function api(method, body, path = '/api/keys') {
  const init = { method, credentials: 'same-origin', headers: {} };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const json = await response.json().catch(() => null);
  return { response, json };
}

function showError(json, response) {
  errorLine.textContent = json?.error?.message ?? `Request failed (HTTP ${response.status}).`;
}

function when(iso) {
  return iso === null ? '—' : new Date(iso).toLocaleString();
}

function cell(row, text) {
  const td = document.createElement('td');
  td.textContent = text;
  row.append(td);
  return td;
}

function render(keys) {
  const tbody = $('keys');
  tbody.replaceChildren();
  $('no-keys').hidden = keys.length > 0;
  for (const key of keys) {
    const row = document.createElement('tr');
    row.dataset.keyId = key.id;
    cell(row, key.name ?? '—');
    cell(row, key.scope);
    cell(row, key.project ?? '—');
    cell(row, `${key.prefix}…${key.last_four}`);
    cell(row, when(key.created_at));
    cell(row, when(key.last_used_at));
    cell(row, key.revoked_at === null ? 'active' : `revoked ${when(key.revoked_at)}`).className = 'status';
    const actions = cell(row, '');
    if (key.revoked_at === null) {
      const revoke = document.createElement('button');
      revoke.type = 'button';
      revoke.textContent = 'Revoke';
      revoke.className = 'revoke';
      revoke.addEventListener('click', () => revokeKey(key));
      actions.append(revoke);
    }
    tbody.append(row);
  }
}

async function load() {
  const { response, json } = await api('GET');
  if (response.status === 401) {
    $('signed-out').hidden = false;
    $('signed-in').hidden = true;
    return;
  }
  if (!response.ok) return showError(json, response);
  $('signed-out').hidden = true;
  $('signed-in').hidden = false;
  render(json.data);
}

async function revokeKey(key) {
  const label = key.name ?? `${key.prefix}…${key.last_four}`;
  if (!confirm(`Revoke the key ${label}? Anything using it stops working at once.`)) return;
  const { response, json } = await api('DELETE', { id: key.id });
  if (!response.ok) return showError(json, response);
  errorLine.textContent = '';
  await load();
}

$('create').addEventListener('submit', async (event) => {
  event.preventDefault();
  const body = { scope: $('scope').value };
  const name = $('name').value.trim();
  const project = $('project').value.trim();
  if (name !== '') body.name = name;
  if (project !== '') body.project = project;
  $('create-button').disabled = true;
  try {
    const { response, json } = await api('POST', body);
    if (!response.ok) return showError(json, response);
    errorLine.textContent = '';
    $('secret').textContent = json.secret;
    $('copy-status').textContent = '';
    $('new-secret').hidden = false;
    $('create').reset();
    await load();
  } finally {
    $('create-button').disabled = false;
  }
});

$('copy').addEventListener('click', async () => {
  try {
    await navigator.clipboard.writeText($('secret').textContent);
    $('copy-status').textContent = 'Copied.';
  } catch {
    $('copy-status').textContent = 'Copy failed: select the key and copy it by hand.';
  }
});

$('sign-out').addEventListener('click', async () => {
  await api('DELETE', {}, '/api/session');
  $('new-secret').hidden = true;
  $('secret').textContent = '';
  await load();
});

load().catch(() => { errorLine.textContent = 'The server could not be reached; reload to try again.'; });
