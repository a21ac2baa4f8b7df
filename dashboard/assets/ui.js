// Shared page components: header, stat cards, tables, dialogs, notices.

import { h, fill } from './dom.js';
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

// stats builds stat cards; set(key, value, href) updates one.
export function stats(items) {
  const values = {};
  const el = h('div', { class: 'stats' }, items.map(([key, label]) => {
    values[key] = h('div', { class: 'stat-value', id: 'stat-' + key, text: fmt.dash });
    return h('div', { class: 'stat' }, h('div', { class: 'stat-label', text: label }), values[key]);
  }));
  el.set = (key, value, href) => {
    fill(values[key], href ? h('a', { href }, value) : value);
  };
  return el;
}

// table builds a table. headRows: one row of columns [{label, class, span, rows}], or an
// array of such rows; rows: arrays of cells (strings, numbers, nodes, or {text|node, class,
// title, attrs}); rowAttrs(i) gives each row's attributes.
export function table(headRows, rows, empty = 'Nothing here.', rowAttrs = () => ({})) {
  if (!Array.isArray(headRows[0])) headRows = [headRows];
  const thead = h('thead', null, headRows.map((cols) => h('tr', null, cols.map((c) =>
    h('th', { class: c.class, colspan: c.span ? String(c.span) : null, rowspan: c.rows ? String(c.rows) : null, text: c.label })))));
  const width = headRows[0].reduce((n, c) => n + (c.span || 1), 0);
  const body = rows.length
    ? rows.map((cells, i) => h('tr', rowAttrs(i), cells.map(cell)))
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

// healthPill shows a health state ("ok", "warning", "critical").
export function healthPill(hv) {
  const state = (hv && hv.state) || 'ok';
  return h('span', { class: ['health', state], dataset: { state }, text: state === 'ok' ? 'ok' : state });
}

// problemList lists a health state's problems, worst first.
export function problemList(hv) {
  const probs = ((hv && hv.problems) || []).slice().sort((a, b) => (a.severity === b.severity ? 0 : a.severity === 'critical' ? -1 : 1));
  if (!probs.length) return null;
  return h('ul', { class: 'problems' }, probs.map((p) => h('li', { class: p.severity, dataset: { code: p.code }, text: p.text })));
}
