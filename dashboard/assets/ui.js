// Shared page components: header, stat cards, tables, dialogs, notices.

import { h, fill, route } from './dom.js';
import * as fmt from './format.js';

// header is a page title with breadcrumbs: crumbs are [label, href] pairs.
export function header(title, crumbs = [], subtitle = '') {
  const trail = crumbs.length
    ? h('nav', { class: 'crumbs' }, crumbs.map(([label, href]) => [h('a', { href }, label), h('span', { class: 'sep' }, '/')]))
    : null;
  return h('div', { class: 'page-head' }, trail, h('h1', { text: title }), subtitle ? h('p', { class: 'muted', text: subtitle }) : null);
}

// card is a titled panel; body is filled later through the returned element's .body.
export function card(title, ...extra) {
  const body = h('div', { class: 'card-body' });
  const el = h('section', { class: 'card' }, h('div', { class: 'card-head' }, h('h2', { text: title }), ...extra), body);
  el.body = body;
  return el;
}

// stats builds stat cards of items [key, label, size] (size 'small' for long values);
// set(key, value, href) updates one, show(key, shown) shows or hides one.
export function stats(items) {
  const values = {};
  const cards = {};
  const el = h('div', { class: 'stats' }, items.map(([key, label, size]) => {
    values[key] = h('div', { class: ['stat-value', size], id: 'stat-' + key, text: fmt.dash });
    cards[key] = h('div', { class: 'stat' }, h('div', { class: 'stat-label', text: label }), values[key]);
    return cards[key];
  }));
  el.set = (key, value, href) => {
    fill(values[key], href ? h('a', { href }, value) : value);
  };
  el.show = (key, shown) => {
    cards[key].hidden = !shown;
  };
  return el;
}

// table builds a table. headRows: one row of columns [{label, class, span, rows}], or an
// array of such rows; rows: arrays of cells (strings, numbers, nodes, or {text|node, class,
// title, attrs}), or {cells, attrs}, or {full: node, attrs}: one cell the table's width
// (details under the row before); rowAttrs(i) gives each array row's attributes.
export function table(headRows, rows, empty = 'Nothing here.', rowAttrs = () => ({})) {
  if (!Array.isArray(headRows[0])) headRows = [headRows];
  const thead = h('thead', null, headRows.map((cols) => h('tr', null, cols.map((c) =>
    h('th', { class: c.class, colspan: c.span ? String(c.span) : null, rowspan: c.rows ? String(c.rows) : null, text: c.label })))));
  const width = headRows[0].reduce((n, c) => n + (c.span || 1), 0);
  const row = (r, i) => {
    if (Array.isArray(r)) return h('tr', rowAttrs(i), r.map(cell));
    if (r.full !== undefined) return h('tr', r.attrs, h('td', { class: 'full', colspan: String(width) }, r.full));
    return h('tr', r.attrs, r.cells.map(cell));
  };
  const body = rows.length
    ? rows.map(row)
    : [h('tr', null, h('td', { class: 'empty', colspan: String(width), text: empty }))];
  return h('div', { class: 'table-wrap' }, h('table', { class: 'table' }, thead, h('tbody', null, body)));
}

function cell(c) {
  if (c instanceof Node || typeof c !== 'object' || c === null) return h('td', null, c ?? fmt.dash);
  return h('td', { class: c.class, title: c.title, ...(c.attrs || {}) }, c.node ?? c.text ?? fmt.dash);
}

// mono renders an id or name in a monospace span (or a dash).
export function mono(text, title) {
  return text ? h('span', { class: 'mono', title: title || text, text }) : h('span', { class: 'muted', text: fmt.dash });
}

// metadataList renders metadata as key = value lines.
export function metadataList(md) {
  const keys = Object.keys(md || {}).sort();
  if (!keys.length) return h('span', { class: 'muted', text: 'no metadata' });
  return h('dl', { class: 'kv' }, keys.map((k) => [h('dt', { text: k }), h('dd', { text: md[k] })]));
}

// payload renders a payload preview: text or a hex dump, with its size.
export function payload(p) {
  if (p.offloaded) return h('span', { class: 'muted', text: 'offloaded · ' + fmt.bytes(p.size) });
  const kind = p.encoding === 'hex' ? 'binary' : 'text';
  const note = [kind, fmt.bytes(p.size)];
  if (p.truncated) note.push('truncated');
  return h('div', { class: 'payload' },
    h('pre', { class: ['payload-body', p.encoding === 'hex' ? 'hex' : ''], text: p.preview === '' ? '(empty)' : p.preview }),
    h('div', { class: 'payload-note', text: note.join(' · ') }));
}

// button builds a button; kind is '', 'primary' or 'danger'.
export function button(label, onClick, kind = '', attrs = {}) {
  return h('button', { type: 'button', class: ['btn', kind], on: { click: onClick }, ...attrs }, label);
}

// confirm asks in a modal dialog; resolves true when confirmed.
export function confirm({ title, body, confirmLabel = 'Confirm', danger = false }) {
  return new Promise((resolve) => {
    const done = (ok) => {
      dialog.close();
      dialog.remove();
      resolve(ok);
    };
    const dialog = h('dialog', { class: 'modal' },
      h('h3', { text: title }),
      h('div', { class: 'modal-body' }, body),
      h('div', { class: 'modal-actions' },
        button('Cancel', () => done(false), '', { dataset: { cancel: '' } }),
        button(confirmLabel, () => done(true), danger ? 'danger' : 'primary', { dataset: { confirm: '' } })));
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      done(false);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

// show displays content in a modal dialog with a Close button.
export function show(title, content) {
  const dialog = h('dialog', { class: 'modal wide' }, h('h3', { text: title }), h('div', { class: 'modal-body' }, content),
    h('div', { class: 'modal-actions' }, button('Close', () => { dialog.close(); dialog.remove(); })));
  dialog.addEventListener('close', () => dialog.remove());
  document.body.append(dialog);
  dialog.showModal();
}

// toast shows a short notice; kind is 'ok' or 'error'.
export function toast(text, kind = 'ok') {
  const el = h('div', { class: ['toast', kind], role: 'status', text });
  document.getElementById('toasts').append(el);
  setTimeout(() => el.remove(), kind === 'error' ? 8000 : 4000);
}

// errorBox shows an error inside a page.
export function errorBox(err) {
  return h('div', { class: 'alert' }, h('strong', { text: err.status ? 'Error ' + err.status + ': ' : 'Error: ' }), err.message);
}

// memoryText is the Redis servers' memory of a memory view: "38.2/40.0 MiB (95 %)", each
// server named when there are several; "full" when Redis refuses publishes.
export function memoryText(m) {
  const servers = (m && m.servers) || [];
  if (!servers.length) return fmt.dash;
  const text = servers.length === 1 ? servers[0].text : servers.map((s) => s.addr + ' ' + s.text).join(', ');
  return m.full ? text + ' · full' : text;
}

// rate shows a rate with how fresh it is (a freshness view): "188 · stale" with the time of
// the last sample when the history stopped, "188 · live" when it comes from this dashboard's
// reads while Redis refuses the history's writes.
export function rate(r, f) {
  const text = fmt.rate(r);
  if (!f || (!f.stale && !f.live)) return h('span', { text });
  const mark = f.stale ? 'stale' : 'live';
  return h('span', { class: 'stack', dataset: { fresh: mark }, title: f.text },
    h('span', { text }),
    h('span', { class: ['small', f.stale ? 'stale-note' : 'live-note'], text: f.stale ? 'stale · as of ' + fmt.clock(f.lastSample) : 'live reads' }));
}

// freshnessNote is a line saying how fresh a page's figures are; null when fresh.
export function freshnessNote(f) {
  if (!f || !f.text) return null;
  return h('p', { class: ['small', 'freshness', f.stale ? 'stale-note' : 'live-note'], dataset: { field: 'freshness', fresh: f.stale ? 'stale' : 'live' }, text: 'Rates and lag trends: ' + f.text + '.' });
}

// healthPill shows a health state ("ok", "warning", "critical").
export function healthPill(hv) {
  const state = (hv && hv.state) || 'ok';
  return h('span', { class: ['health', state], dataset: { state }, text: state === 'ok' ? 'ok' : state });
}

// problemList lists a health state's problems, worst first: each says what is wrong and since
// when, and the next step with its CLI command (and, when link(p) gives one, the dashboard
// page to go to).
export function problemList(hv, link = () => null) {
  const probs = ((hv && hv.problems) || []).slice().sort((a, b) => rank(b.severity) - rank(a.severity));
  if (!probs.length) return null;
  return h('ul', { class: 'problems', dataset: { field: 'problems' } }, probs.map((p) => h('li', { class: p.severity, dataset: { code: p.code } },
    h('div', { class: 'problem-text', dataset: { field: 'problem' }, text: p.text }),
    p.detail ? h('div', { class: 'problem-detail', dataset: { field: 'detail' }, text: p.detail }) : null,
    p.next || p.command ? nextStep(p, link(p)) : null)));
}

function rank(sev) {
  return sev === 'critical' ? 2 : sev === 'warning' ? 1 : 0;
}

// nextStep is a problem's next step: what to do, the command to run, the page to open.
function nextStep(p, to) {
  return h('div', { class: 'problem-next', dataset: { field: 'next' } },
    h('span', { class: 'next-label', text: 'Next' }),
    p.next ? h('span', { text: p.next }) : null,
    p.command ? h('code', { class: 'cmd', title: 'run it', text: '$ ' + p.command }) : null,
    to ? h('a', { href: to[1], class: 'next-link', text: to[0] + ' →' }) : null);
}

// problemCount is "1 problem", "3 problems", or "" when none.
export function problemCount(hv) {
  const n = ((hv && hv.problems) || []).length;
  return n ? fmt.plural(n, 'problem', 'problems') : '';
}

// healthBlock leads a page with its health: the state, a headline, every problem full width.
export function healthBlock(hv, headline, link) {
  const state = (hv && hv.state) || 'ok';
  return h('section', { class: ['health-block', state], dataset: { field: 'health', state } },
    h('div', { class: 'health-head' }, healthPill(hv), h('span', { class: 'health-headline', dataset: { field: 'headline' }, text: headline })),
    problemList(hv, link));
}

// problemLinks gives the page a problem of topic leads to: its dead letters, or its group's
// page (none for the group whose page shows it, here).
export function problemLinks(topic, here = '') {
  return (p) => {
    if (p.code === 'dead-letters-arriving') return ['Dead letters', route('topics', topic, 'dlq')];
    if (p.group && p.group !== here) return ['Group ' + p.group, route('topics', topic, 'groups', p.group)];
    return null;
  };
}
