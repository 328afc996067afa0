// The key page: vanilla JS against /api/keys with the session cookie (same origin, JSON bodies).
const $ = (id) => document.getElementById(id);
const errorLine = $('error');
const FIELDS = ['scope', 'name', 'project'];

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

/**
 * The API's error envelope as a sentence a person can act on, and the field it belongs next to
 * (null: the form as a whole). The envelope's own message is written for programs (field paths,
 * schema words), so the known codes get their own words; anything else keeps the server's.
 */
function plainError(response, json) {
  const error = json?.error ?? {};
  const code = error.code ?? '';
  const message = String(error.message ?? '');
  if (code === 'hosted_entitlement_required') {
    return { field: 'scope', text: 'Your account has no hosted-compute plan yet, so it cannot have a chat key. Choose “Identity only” for now, or ask your operator to add a plan.' };
  }
  if (code === 'key_limit_reached') {
    return { field: null, text: 'You already have as many active keys as your plan allows. Revoke one you no longer use, then create this one.' };
  }
  // The 400's message names the field as `project: …` after the body's shape (`{scope, name?, project?}`).
  if (code === 'invalid_request' && /\bproject: /.test(message)) {
    return { field: 'project', text: 'A project is 1 to 128 letters, digits or symbols, with no spaces. Leave it empty if you do not need one.' };
  }
  if (code === 'invalid_request' && /\bname: /.test(message)) {
    return { field: 'name', text: 'A name is 1 to 100 characters. Leave it empty if you do not need one.' };
  }
  if (code === 'svc_account_disabled') return { field: null, text: 'This account is disabled. Ask your operator.' };
  if (response.status === 401) return { field: null, text: 'You are signed out (the session ended). Open a new sign-in link from your operator.' };
  if (response.status === 429) return { field: null, text: 'Too many requests just now. Wait a few seconds and try again.' };
  if (response.status >= 500) return { field: null, text: 'The server could not do this right now. Try again in a moment.' };
  return { field: null, text: message !== '' ? message : `The request failed (HTTP ${response.status}).` };
}

function clearErrors() {
  for (const field of FIELDS) {
    $(`${field}-error`).textContent = '';
    $(field).removeAttribute('aria-invalid');
  }
  $('form-error').textContent = '';
  errorLine.textContent = '';
  errorLine.hidden = true;
}

function showFormError(response, json) {
  const { field, text } = plainError(response, json);
  if (field === null) {
    $('form-error').textContent = text;
    return;
  }
  $(`${field}-error`).textContent = text;
  $(field).setAttribute('aria-invalid', 'true');
  $(field).focus();
}

function showPageError(response, json) {
  errorLine.textContent = plainError(response, json).text;
  errorLine.hidden = false;
}

/** ISO 8601 in UTC, to the minute (`2026-11-28 15:04 UTC`), as the usage page writes times. */
function when(iso) {
  if (iso === null) return '—';
  const time = document.createElement('time');
  time.dateTime = iso;
  time.textContent = `${iso.slice(0, 16).replace('T', ' ')} UTC`;
  return time;
}

function cell(row, content) {
  const td = document.createElement('td');
  td.append(content);
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
    const status = cell(row, key.revoked_at === null ? 'active' : 'revoked ');
    if (key.revoked_at !== null) status.append(when(key.revoked_at));
    status.className = 'status';
    const actions = cell(row, '');
    if (key.revoked_at === null) {
      const revoke = document.createElement('button');
      revoke.type = 'button';
      revoke.textContent = 'Revoke';
      revoke.className = 'revoke';
      revoke.setAttribute('aria-label', `Revoke ${key.name ?? `${key.prefix}…${key.last_four}`}`);
      revoke.addEventListener('click', () => revokeKey(key));
      actions.append(revoke);
    }
    tbody.append(row);
  }
}

async function load() {
  const { response, json } = await api('GET');
  const signedIn = response.status !== 401;
  $('signed-out').hidden = signedIn;
  $('signed-in').hidden = !signedIn;
  $('sign-out').hidden = !signedIn;
  if (!signedIn) return;
  if (!response.ok) return showPageError(response, json);
  render(json.data);
}

async function revokeKey(key) {
  const label = key.name ?? `${key.prefix}…${key.last_four}`;
  if (!confirm(`Revoke the key ${label}? Anything using it stops working at once.`)) return;
  const { response, json } = await api('DELETE', { id: key.id });
  if (!response.ok) return showPageError(response, json);
  clearErrors();
  await load();
}

/** The base URL clients are given: this page's own origin, where the hosted API answers under /api/v1. */
function baseUrl() {
  return `${location.origin}/api/v1`;
}

/** The model ids the hosted API serves (`GET /api/v1/models`), in its order. */
async function modelIds() {
  const { response, json } = await api('GET', undefined, '/api/v1/models');
  if (!response.ok || !Array.isArray(json?.data)) return [];
  return json.data.map((m) => m.id).filter((id) => typeof id === 'string');
}

/** A first chat request with the new key, one argument per line (POSIX shell quoting). */
function curlLine(base, model, secret) {
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello' }] });
  return [
    `curl ${base}/chat/completions \\`,
    `  -H "Authorization: Bearer ${secret}" \\`,
    '  -H "Content-Type: application/json" \\',
    `  -d '${body}'`,
  ].join('\n');
}

async function showQuickStart(issued) {
  const base = baseUrl();
  $('base-url').textContent = base;
  const models = await modelIds();
  const list = $('models');
  list.replaceChildren();
  models.forEach((id, i) => {
    if (i > 0) list.append(', ');
    const code = document.createElement('code');
    code.textContent = id;
    list.append(code);
  });
  if (models.length === 0) list.textContent = 'The model list could not be read; see /api/v1/models.';
  const canChat = issued.scope === 'supercomputer';
  $('quick-start-note').textContent = canChat
    ? 'Any OpenAI-compatible client works: give it the base URL, this key and a model name.'
    : 'This key is identity only: the chat API answers it with 402. Create a “Chat” key to chat.';
  $('curl').textContent = canChat && models.length > 0 ? curlLine(base, models[0], issued.secret) : '';
  $('curl').hidden = $('curl').textContent === '';
  $('copy-curl').hidden = $('curl').hidden;
  $('curl-status').textContent = '';
}

$('create').addEventListener('submit', async (event) => {
  event.preventDefault();
  clearErrors();
  const body = { scope: $('scope').value };
  const name = $('name').value.trim();
  const project = $('project').value.trim();
  if (name !== '') body.name = name;
  if (project !== '') body.project = project;
  $('create-button').disabled = true;
  try {
    const { response, json } = await api('POST', body);
    if (!response.ok) return showFormError(response, json);
    $('secret').textContent = json.secret;
    $('copy-status').textContent = '';
    $('create').reset();
    await showQuickStart(json);
    $('new-secret').hidden = false;
    await load();
  } catch {
    $('form-error').textContent = 'The server could not be reached. Check your connection and try again.';
  } finally {
    $('create-button').disabled = false;
  }
});

async function copy(text, status) {
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = 'Copied.';
  } catch {
    status.textContent = 'Copy failed: select the text and copy it by hand.';
  }
}

$('copy').addEventListener('click', () => copy($('secret').textContent, $('copy-status')));
$('copy-curl').addEventListener('click', () => copy($('curl').textContent, $('curl-status')));

$('sign-out').addEventListener('click', async () => {
  await api('DELETE', {}, '/api/session');
  $('new-secret').hidden = true;
  $('secret').textContent = '';
  $('curl').textContent = '';
  clearErrors();
  await load();
});

load().catch(() => {
  errorLine.textContent = 'The server could not be reached; reload to try again.';
  errorLine.hidden = false;
});
