// A topic's dead letters: the top reasons (the letters counted by reason under the filters),
// then the letters newest first, one compact row each (reason and payload preview cut to two
// lines: ten letters a screen); details; and, when writes are enabled, replay one /
// selected / all and delete, each confirmed.

import { h, fill, route } from '../dom.js';
import * as api from '../api.js';
import * as ui from '../ui.js';
import * as fmt from '../format.js';

const LIMIT = 50;
const TOP_REASONS = 5;

// isoOf turns a datetime-local value, read in UTC as every time the pages show, into RFC
// 3339, '' when empty.
function isoOf(v) {
  if (!v) return '';
  const d = new Date(v + 'Z');
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

// filterBar builds the filter inputs; onChange(filters) runs on every change.
function filterBar(onChange) {
  const input = (name, label, attrs = {}) => {
    const el = h('input', { class: ['input', attrs.wide ? 'wide' : ''], name, 'aria-label': label, type: attrs.type || 'text', placeholder: attrs.placeholder || '' });
    return [el, h('label', null, label, el)];
  };
  const fields = [
    input('group', 'Group', { placeholder: 'any' }), input('reason', 'Reason contains', { placeholder: 'any' }),
    input('partition', 'Partition', { placeholder: 'all, or 1,3' }), input('since', 'Failed from (UTC)', { type: 'datetime-local' }),
    input('until', 'Failed until (UTC)', { type: 'datetime-local' }), input('q', 'Search', { wide: true, placeholder: 'uuid, payload, metadata, id…' }),
  ];
  let timer = 0;
  const read = () => {
    const v = {};
    for (const [el] of fields) v[el.name] = el.type === 'datetime-local' ? isoOf(el.value) : el.value.trim();
    return v;
  };
  for (const [el] of fields) {
    el.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => onChange(read()), 300);
    });
  }
  const clear = ui.button('Clear', () => {
    for (const [el] of fields) el.value = '';
    onChange(read());
  }, 'small', { dataset: { action: 'clear-filters' } });
  const form = h('form', { class: 'filters', on: { submit: (e) => e.preventDefault() } }, fields.map((f) => f[1]), clear);
  // set fills one filter (by name) and applies the filters at once.
  form.set = (name, value) => {
    for (const [el] of fields) if (el.name === name) el.value = value;
    onChange(read());
  };
  return form;
}

// compactPayload is a payload preview on one row: its text with runs of white space made one
// space, cut to two lines by the stylesheet, and its size; the whole payload is in Details.
function compactPayload(p) {
  if (p.offloaded) return h('span', { class: 'muted', text: 'offloaded · ' + fmt.bytes(p.size) });
  const binary = p.encoding === 'hex';
  const text = binary ? 'binary' : p.preview.replace(/\s+/g, ' ').trim();
  return h('div', { class: 'payload-line', title: binary ? p.preview : text },
    h('span', { class: ['payload-text', binary ? 'muted' : ''], text: text || '(empty)' }),
    h('span', { class: 'payload-note', text: fmt.bytes(p.size) + (p.truncated ? ' · truncated' : '') }));
}

// topReasons fills el with the letters counted by reason: the count, the newest failure, the
// reason (a button that filters the list by it), and what the rest adds up to.
function topReasons(el, data, onPick) {
  if (!data.letters) {
    fill(el, h('p', { class: 'muted small', text: 'No dead letter matches the filters.' }));
    return;
  }
  const rows = data.counts.map((c) => [
    { text: fmt.int(c.letters), class: 'num', attrs: { dataset: { field: 'count' } } },
    { node: when(c.newest), class: 'when' },
    { node: h('button', { type: 'button', class: 'btn link', title: 'List only these: ' + (c.key || '(none)'),
      on: { click: () => onPick(c.key) }, dataset: { action: 'filter-reason' }, text: c.key || '(none)' }), class: 'reason' },
  ]);
  let total = fmt.plural(data.letters, 'dead letter', 'dead letters') + ', ' + fmt.plural(data.keys, 'reason', 'reasons');
  if (data.others) {
    total += ' · ' + fmt.plural(data.keys - data.counts.length, 'more reason', 'more reasons') + ' with ' + fmt.plural(data.others, 'letter', 'letters');
  }
  if (data.truncated) total += ' · counted the newest ' + fmt.int(data.scanned) + ' read';
  fill(el, ui.table([{ label: 'Letters', class: 'num' }, { label: 'Newest failure' }, { label: 'Reason' }], rows),
    h('p', { class: 'muted small', dataset: { field: 'reasons-total' }, text: total }));
}

const key = (e) => e.partition + '/' + e.id;

// when shows a time as its date over its clock time.
function when(iso) {
  if (!iso) return fmt.dash;
  return h('span', { class: 'stack' }, h('span', { text: fmt.clock(iso) }), h('span', { class: 'muted small', text: fmt.date(iso) }));
}

export default function dlqPage(topic) {
  const selected = new Map(); // key -> {partition, id}
  let st;
  let list;
  let reasons;
  let bar;
  let toolbar;
  let removeAfter;
  let ctx;
  let entries = [];
  let shown = ''; // what the table shows: entries and selection, to skip needless redraws
  let filters = {};
  let pages = ['']; // the cursors of the pages shown so far: '' is the first page
  let next = '';
  let pager;
  const base = api.path('topics', topic, 'dlq');

  // run posts body to path, shows the outcome, and returns the answer (undefined on failure).
  async function run(what, path, body, describe) {
    try {
      const res = await api.post(path, body);
      const failed = (res.results || []).filter((r) => r.error);
      ui.toast(describe(res) + (failed.length ? ' (' + failed.length + ' failed: ' + failed[0].error + ')' : ''), failed.length ? 'error' : 'ok');
      for (const r of res.results || []) if (!r.error) selected.delete(key(r));
      ctx.refresh();
      return res;
    } catch (err) {
      ui.toast(what + ' failed: ' + err.message, 'error');
      return undefined;
    }
  }

  async function replay(refs) {
    const del = removeAfter.checked;
    const ok = await ui.confirm({
      title: 'Replay ' + fmt.plural(refs.length, 'dead letter', 'dead letters') + '?',
      body: [h('p', { text: 'Each is appended back to its original partition of ' + topic + ', with its retry count reset; the consumer group that failed it gets it again (the other groups skip it).' }),
        h('p', { class: 'muted', text: del ? 'They are removed from the dead-letter queue once replayed.' : 'They stay in the dead-letter queue.' })],
      confirmLabel: 'Replay',
    });
    if (ok) await sendReplay(refs, del, false);
  }

  // sendReplay replays refs; those replayed before (left alone unless again) are offered
  // to replay again.
  async function sendReplay(refs, del, again) {
    const res = await run('Replay', base + '/replay', { entries: refs, delete: del, again },
      (r) => 'Replayed ' + fmt.plural(r.done, 'dead letter', 'dead letters') + (refs.length === 1 && r.done ? ' to partition ' + refs[0].partition : '') +
        (r.skipped ? '; ' + fmt.plural(r.skipped, 'was', 'were') + ' already replayed' : ''));
    const skipped = ((res && res.results) || []).filter((r) => r.alreadyReplayedAt);
    if (skipped.length) await offerAgain(skipped, del);
  }

  // offerAgain says which dead letters were replayed before, when and as which entry, and
  // replays them again when asked.
  async function offerAgain(skipped, del) {
    const ok = await ui.confirm({
      title: fmt.plural(skipped.length, 'dead letter was', 'dead letters were') + ' already replayed',
      body: [h('ul', { class: 'problems' }, skipped.map((r) => h('li', { dataset: { field: 'already-replayed' },
        text: 'Partition ' + r.partition + ', ' + r.id + ': already replayed at ' + fmt.time(r.alreadyReplayedAt) + ' as ' + r.alreadyReplayedAs }))),
      h('p', { class: 'muted', text: 'Nothing was done. Replay again appends ' + (skipped.length === 1 ? 'it' : 'them') + ' to the partition once more.' })],
      confirmLabel: 'Replay again',
    });
    if (ok) await sendReplay(skipped.map((r) => ({ partition: r.partition, id: r.id })), del, true);
  }

  async function remove(refs) {
    const ok = await ui.confirm({
      title: 'Delete ' + fmt.plural(refs.length, 'dead letter', 'dead letters') + '?',
      body: h('p', { text: 'They are removed from the dead-letter queue of ' + topic + ' for good.' }),
      confirmLabel: 'Delete', danger: true,
    });
    if (ok) await run('Delete', base + '/delete', { entries: refs }, (res) => 'Deleted ' + fmt.plural(res.done, 'dead letter', 'dead letters'));
  }

  async function replayAll() {
    const del = removeAfter.checked;
    const ok = await ui.confirm({
      title: 'Replay all dead letters of ' + topic + '?',
      body: [h('p', { text: 'Up to 1,000 dead letters, oldest first per partition, are appended back to their partitions.' }),
        h('p', { class: 'muted', text: del ? 'They are removed from the dead-letter queue once replayed.' : 'They stay in the dead-letter queue.' })],
      confirmLabel: 'Replay all',
    });
    if (ok) await run('Replay all', base + '/replay-all', { delete: del }, (res) => 'Replayed ' + fmt.plural(res.replayed, 'dead letter', 'dead letters'));
  }

  async function clearAll() {
    const ok = await ui.confirm({
      title: 'Delete every dead letter of ' + topic + '?',
      body: h('p', { text: 'The dead-letter queue of every partition is emptied. This cannot be undone.' }),
      confirmLabel: 'Delete all', danger: true,
    });
    if (ok) await run('Clear', base + '/clear', {}, (res) => 'Deleted ' + fmt.plural(res.removed, 'dead letter', 'dead letters'));
  }

  async function details(e) {
    try {
      const d = await api.get(base + '/' + api.path(e.partition, e.id));
      ui.show('Dead letter ' + d.id, [
        h('dl', { class: 'kv wide' },
          [['Partition', String(d.partition)], ['UUID', d.uuid], ['Reason', d.reason], ['Group', d.group],
            ['Retries', d.retryCount + ' of ' + d.maxRetries], ['Original message id', d.originalMessageId],
            ['Original stream id', d.originalStreamId], ['Published', fmt.time(d.timestamp)], ['Failed at', fmt.time(d.failedAt)],
            ['Replayed', d.replayedAt ? fmt.time(d.replayedAt) + ' as ' + d.replayedAs : '']]
            .map(([k, v]) => [h('dt', { text: k }), h('dd', { text: v || fmt.dash })])),
        h('h4', { text: 'Metadata' }), ui.metadataList(d.metadata),
        h('h4', { text: 'Payload (' + fmt.bytes(d.payload.size) + (d.dataEncoding === 'base64' ? ', base64' : '') + ')' }),
        h('pre', { class: 'payload-body full', text: d.data }),
        d.raw ? [h('h4', { text: 'Raw fields' }), h('pre', { class: 'payload-body', text: d.raw })] : null,
      ]);
    } catch (err) {
      ui.toast('Could not load the dead letter: ' + err.message, 'error');
    }
  }

  function renderToolbar() {
    const refs = [...selected.values()];
    const state = refs.length + '/' + entries.length;
    if (state === toolbar.dataset.state) return;
    toolbar.dataset.state = state;
    fill(toolbar,
      ui.button('Replay selected (' + refs.length + ')', () => replay([...selected.values()]), 'primary', { disabled: !refs.length, dataset: { action: 'replay-selected' } }),
      ui.button('Delete selected (' + refs.length + ')', () => remove([...selected.values()]), 'danger', { disabled: !refs.length, dataset: { action: 'delete-selected' } }),
      h('span', { class: 'spacer' }),
      h('label', { class: 'check' }, removeAfter, 'remove from the DLQ after replay'),
      ui.button('Replay all…', replayAll, '', { disabled: !entries.length, dataset: { action: 'replay-all' } }),
      ui.button('Delete all…', clearAll, 'danger', { disabled: !entries.length, dataset: { action: 'clear' } }));
  }

  function toggle(e, on) {
    if (on) selected.set(key(e), { partition: e.partition, id: e.id });
    else selected.delete(key(e));
    renderToolbar();
  }

  function renderTable() {
    shown = JSON.stringify([entries, [...selected.keys()]]);
    const write = ctx.canWrite;
    const all = h('input', { type: 'checkbox', 'aria-label': 'Select all', checked: entries.length > 0 && entries.every((e) => selected.has(key(e))),
      on: { change: (ev) => { entries.forEach((e) => toggle(e, ev.target.checked)); renderTable(); } } });
    const head = [
      write ? { label: '' } : null, { label: 'Partition', class: 'num' }, { label: 'Id' }, { label: 'Failed at' }, { label: 'Group' },
      { label: 'Reason' }, { label: 'Retries', class: 'num' }, { label: 'Payload' }, { label: '' },
    ].filter(Boolean);
    const rows = entries.map((e) => [
      write ? { node: h('input', { type: 'checkbox', 'aria-label': 'Select', checked: selected.has(key(e)), on: { change: (ev) => toggle(e, ev.target.checked) } }) } : null,
      { text: String(e.partition), class: 'num', attrs: { dataset: { field: 'partition' } } },
      { node: ui.mono(e.id) },
      { node: when(e.failedAt), class: 'when' },
      { node: ui.mono(e.group) },
      { node: h('span', { class: 'clamp', text: e.reason || fmt.dash }), title: e.reason, class: 'reason', attrs: { dataset: { field: 'reason' } } },
      { text: e.retryCount + ' / ' + e.maxRetries, class: 'num' },
      { node: compactPayload(e.payload), class: 'payload-cell', attrs: { dataset: { field: 'payload' } } },
      { node: h('div', { class: 'row-actions' },
        e.replayedAt ? h('span', { class: 'pill ok', title: 'replayed ' + fmt.time(e.replayedAt) + ' as ' + e.replayedAs, dataset: { field: 'replayed' }, text: 'replayed ' + fmt.clock(e.replayedAt) }) : null,
        ui.button('Details', () => details(e), 'small', { dataset: { action: 'details' } }),
        write ? ui.button('Replay', () => replay([{ partition: e.partition, id: e.id }]), 'small primary', { dataset: { action: 'replay' } }) : null,
        write ? ui.button('Delete', () => remove([{ partition: e.partition, id: e.id }]), 'small danger', { dataset: { action: 'delete' } }) : null) },
    ].filter((c) => c !== null));
    // The header's select-all box is a node, so the header is built by hand here.
    const filtered = Object.values(filters).some(Boolean);
    const t = ui.table(head, rows, filtered ? 'No dead letter matches the filters.' : 'No dead letters.',
      (i) => ({ class: entries[i].replayedAt ? 'replayed' : null, dataset: { partition: entries[i].partition, id: entries[i].id, replayed: entries[i].replayedAt ? 'yes' : 'no' } }));
    t.querySelector('table').classList.add('dlq-table');
    if (write) fill(t.querySelector('th'), all);
    fill(list.body, t);
  }

  function renderPager(data) {
    const older = ui.button('Older →', () => {
      pages.push(next);
      ctx.refresh();
    }, 'small', { disabled: !next, dataset: { action: 'older' } });
    const newer = ui.button('← Newer', () => {
      pages.pop();
      ctx.refresh();
    }, 'small', { disabled: pages.length < 2, dataset: { action: 'newer' } });
    const first = ui.button('Newest', () => {
      pages = [''];
      ctx.refresh();
    }, 'small', { disabled: pages.length < 2, dataset: { action: 'newest' } });
    const note = 'Page ' + pages.length + ' · ' + fmt.plural(data.entries.length, 'dead letter', 'dead letters') + ' shown' +
      (data.truncated ? ' · stopped after reading ' + fmt.int(data.scanned) + ' (narrow the filters, or go on with Older)' : '');
    fill(pager, first, newer, older, h('span', { dataset: { field: 'pager' }, text: note }));
  }

  return {
    title: 'Dead letters · ' + topic,
    mount(root, c) {
      ctx = c;
      st = ui.stats([['size', 'Dead letters'], ['shown', 'Shown'], ['page', 'Page'], ['partitions', 'Partitions on this page']]);
      reasons = ui.card('Top reasons', h('span', { class: 'muted small', text: 'the letters that pass the filters, counted by reason: pick one to list its letters' }));
      reasons.dataset.field = 'top-reasons';
      list = ui.card('Entries', h('span', { class: 'muted small', text: 'newest failure first' }));
      bar = filterBar((f) => {
        filters = f;
        pages = [''];
        ctx.refresh();
      });
      pager = h('div', { class: 'pager' });
      list.insertBefore(bar, list.body);
      list.append(pager);
      removeAfter = h('input', { type: 'checkbox' });
      toolbar = h('div', { class: 'toolbar' });
      root.append(ui.header('Dead letters', [['Topics', '#/'], [topic, route('topics', topic)]], topic), st, reasons);
      root.append(ctx.canWrite ? toolbar : h('p', { class: 'muted small readonly-note', text: 'Read-only: replay and delete are available when the dashboard allows writes.' }), list);
    },
    async load(signal) {
      const q = new URLSearchParams({ limit: String(LIMIT) });
      const rq = new URLSearchParams({ top: String(TOP_REASONS) });
      for (const [k, v] of Object.entries(filters)) {
        if (v) q.set(k, v);
        if (v && k !== 'q') rq.set(k, v); // the search does not narrow the counts
      }
      if (pages[pages.length - 1]) q.set('after', pages[pages.length - 1]);
      const [data, counts] = await Promise.all([api.get(base + '?' + q.toString(), signal), api.get(base + '/reasons?' + rq.toString(), signal)]);
      data.reasons = counts;
      return data;
    },
    update(data) {
      const counted = JSON.stringify(data.reasons);
      if (counted !== reasons.dataset.shown) {
        reasons.dataset.shown = counted;
        topReasons(reasons.body, data.reasons, (reason) => bar.set('reason', reason));
      }
      entries = data.entries;
      next = data.next;
      renderPager(data);
      const present = new Set(entries.map(key));
      for (const k of [...selected.keys()]) if (!present.has(k)) selected.delete(k);
      st.set('size', fmt.int(data.size));
      st.set('shown', fmt.int(entries.length));
      st.set('page', String(pages.length));
      st.set('partitions', fmt.int(new Set(entries.map((e) => e.partition)).size));
      if (ctx.canWrite) renderToolbar();
      if (JSON.stringify([entries, [...selected.keys()]]) !== shown) renderTable();
    },
  };
}
