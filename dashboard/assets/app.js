// The dashboard's single page: routes (#/...), polling, session and sign-in.

import { h, fill } from './dom.js';
import * as api from './api.js';
import * as ui from './ui.js';
import * as fmt from './format.js';
import topicsPage from './pages/topics.js';
import topicPage from './pages/topic.js';
import groupPage from './pages/group.js';
import dlqPage from './pages/dlq.js';
import dlqTopicsPage from './pages/dlqtopics.js';
import messagesPage from './pages/messages.js';

const routes = [
  [/^#?\/?$/, () => topicsPage(), 'topics'],
  [/^#\/dlq$/, () => dlqTopicsPage(), 'dlq'],
  [/^#\/topics\/([^/]+)$/, (m) => topicPage(m[1]), 'topics'],
  [/^#\/topics\/([^/]+)\/dlq$/, (m) => dlqPage(m[1]), 'dlq'],
  [/^#\/topics\/([^/]+)\/messages$/, (m) => messagesPage(m[1]), 'topics'],
  [/^#\/topics\/([^/]+)\/groups\/([^/]+)$/, (m) => groupPage(m[1], m[2]), 'topics'],
];

const main = document.getElementById('main');
let session = null;
let current = null; // { page, gen, timer, abort, loading, again, errorEl }
let gen = 0;

function decode(m) {
  return m.map((x, i) => (i === 0 ? x : decodeURIComponent(x)));
}

function findRoute(hash) {
  for (const [re, make, nav] of routes) {
    const m = hash.match(re);
    if (m) return { make: () => make(decode(m)), nav };
  }
  return null;
}

function route() {
  stop();
  const found = findRoute(location.hash);
  document.querySelectorAll('[data-nav]').forEach((a) => a.classList.toggle('active', found && a.dataset.nav === found.nav));
  if (!found) {
    fill(main, ui.header('Not found'), h('p', null, 'No such page. ', h('a', { href: '#/' }, 'Back to the topics')));
    return;
  }
  const page = found.make();
  const errorEl = h('div', { class: 'page-error' });
  fill(main, errorEl);
  page.mount(main, { session, refresh: refreshNow, canWrite: !session.readOnly });
  document.title = page.title + ' · streamq';
  current = { page, gen: ++gen, timer: 0, abort: null, loading: false, again: false, errorEl };
  tick(current.gen);
}

function stop() {
  if (!current) return;
  clearTimeout(current.timer);
  if (current.abort) current.abort.abort();
  current = null;
}

async function tick(g) {
  const c = current;
  if (!c || c.gen !== g) return;
  clearTimeout(c.timer);
  c.loading = true;
  c.abort = new AbortController();
  try {
    const data = await c.page.load(c.abort.signal);
    if (current !== c) return;
    c.page.update(data);
    fill(c.errorEl);
    setUpdated(true);
  } catch (err) {
    if (current !== c || err.name === 'AbortError') return;
    if (err.status === 401) {
      signIn();
      return;
    }
    fill(c.errorEl, ui.errorBox(err));
    setUpdated(false);
  } finally {
    c.loading = false;
  }
  if (current !== c) return;
  if (c.again) {
    c.again = false;
    tick(g);
    return;
  }
  c.timer = setTimeout(() => tick(g), document.hidden ? session.refreshMs * 5 : session.refreshMs);
}

// refreshNow reloads the current page's data at once (after a write).
function refreshNow() {
  if (!current) return;
  if (current.loading) {
    current.again = true;
    return;
  }
  tick(current.gen);
}

function setUpdated(ok) {
  const el = document.getElementById('updated');
  el.classList.toggle('stale', !ok);
  el.textContent = (ok ? 'Updated ' : 'Update failed ') + fmt.clock(Date.now());
}

function showMode() {
  const el = document.getElementById('mode');
  el.hidden = false;
  el.textContent = session.readOnly ? 'read-only' : 'writes enabled';
  el.classList.add(session.readOnly ? 'ro' : 'rw');
}

function signIn() {
  stop();
  const input = h('input', { type: 'password', class: 'input', autocomplete: 'current-password', placeholder: 'Token', 'aria-label': 'Token' });
  const form = h('form', { class: 'signin', on: { submit: (e) => {
    e.preventDefault();
    api.setToken(input.value.trim());
    start();
  } } }, h('h2', { text: 'Sign in' }),
  h('p', { class: 'muted', text: api.hasToken() ? 'The token was refused. Enter the dashboard token.' : 'This dashboard needs a token (streamq ui --token, or $STREAMQ_UI_TOKEN).' }),
  input, h('button', { type: 'submit', class: 'btn primary' }, 'Sign in'));
  fill(main, form);
  input.focus();
}

async function start() {
  try {
    session = await api.get('session');
  } catch (err) {
    if (err.status === 401) {
      signIn();
      return;
    }
    fill(main, ui.errorBox(err));
    return;
  }
  api.setCSRF(session.csrfToken);
  showMode();
  route();
}

window.addEventListener('hashchange', () => {
  if (session) route();
});
document.addEventListener('visibilitychange', () => {
  if (!document.hidden) refreshNow();
});
start();
