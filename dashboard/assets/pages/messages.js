// A topic's message browser: the entries newest first over the partitions, narrowed by
// partition, id or time range, partition key, UUID or a search in payloads and metadata,
// page by page, each with its metadata and a payload preview.

import { h, fill, route } from '../dom.js';
import * as api from '../api.js';
import * as ui from '../ui.js';
import * as fmt from '../format.js';

const LIMIT = 25;

// boundOf passes an id ("1700000000000-0"), unix ms or an RFC 3339 time on as typed, and
// turns a datetime-local value (the browser's zone) into RFC 3339.
function boundOf(el) {
  const v = el.value.trim();
  if (!v || el.type !== 'datetime-local') return v;
  const d = new Date(v);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

function form(onChange) {
  const field = (name, label, placeholder, extra = {}) => {
    const el = h('input', { class: ['input', extra.wide ? 'wide' : ''], name, type: extra.type || 'text', placeholder, 'aria-label': label });
    return { el, node: h('label', null, label, el) };
  };
  const fields = [
    field('partition', 'Partition', 'all, or 0,2'),
    field('from', 'From (id or time)', '1700000000000-0 or 2026-12-01T10:00:00Z'),
    field('to', 'To (id or time)', 'id or RFC 3339 time'),
    field('key', 'Partition key', 'exact'),
    field('uuid', 'UUID', 'exact', { wide: true }),
    field('q', 'Search', 'payload or metadata', { wide: true }),
  ];
  let timer = 0;
  const read = () => Object.fromEntries(fields.map((f) => [f.el.name, boundOf(f.el)]));
  for (const f of fields) {
    f.el.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(() => onChange(read()), 300);
    });
  }
  const clear = ui.button('Clear', () => {
    for (const f of fields) f.el.value = '';
    onChange(read());
  }, 'small', { dataset: { action: 'clear-filters' } });
  return h('form', { class: 'filters', on: { submit: (e) => e.preventDefault() } }, fields.map((f) => f.node), clear);
}

function details(e) {
  ui.show('Message ' + e.id, [
    h('dl', { class: 'kv wide' }, [['Partition', String(e.partition)], ['Id', e.id], ['Time', fmt.time(e.time)], ['UUID', e.uuid]]
      .map(([k, v]) => [h('dt', { text: k }), h('dd', { text: v || fmt.dash })])),
    h('h4', { text: 'Metadata' }), ui.metadataList(e.metadata),
    h('h4', { text: 'Payload' }), e.malformed ? h('p', { class: 'warn', text: 'malformed: ' + e.malformed }) : ui.payload(e.payload),
    Object.keys(e.fields).length ? [h('h4', { text: 'Other fields' }), ui.metadataList(e.fields)] : null,
  ]);
}

function table(entries, filtered) {
  const rows = entries.map((e) => [
    { text: String(e.partition), class: 'num', attrs: { dataset: { field: 'partition' } } },
    { node: ui.mono(e.id), attrs: { dataset: { field: 'id' } } },
    { text: fmt.time(e.time), class: 'nowrap' },
    { node: ui.mono(e.metadata.partition_key || ''), attrs: { dataset: { field: 'key' } } },
    { node: ui.mono(e.uuid), attrs: { dataset: { field: 'uuid' } } },
    { node: e.malformed ? h('span', { class: 'warn', text: 'malformed: ' + e.malformed }) : ui.payload(e.payload), class: 'payload-cell', attrs: { dataset: { field: 'payload' } } },
    { node: ui.button('Details', () => details(e), 'small', { dataset: { action: 'details' } }) },
  ]);
  return ui.table([{ label: 'Partition', class: 'num' }, { label: 'Id' }, { label: 'Time' }, { label: 'Key' }, { label: 'UUID' }, { label: 'Payload' }, { label: '' }],
    rows, filtered ? 'No message matches.' : 'The topic is empty.', (i) => ({ dataset: { partition: entries[i].partition, id: entries[i].id } }));
}

export default function messagesPage(topic) {
  let list;
  let pager;
  let ctx;
  let filters = {};
  let pages = [''];
  let next = '';
  let shown = '';
  const base = api.path('topics', topic, 'messages');

  function renderPager(data) {
    const move = (fn) => () => {
      fn();
      ctx.refresh();
    };
    fill(pager,
      ui.button('Newest', move(() => { pages = ['']; }), 'small', { disabled: pages.length < 2, dataset: { action: 'newest' } }),
      ui.button('← Newer', move(() => pages.pop()), 'small', { disabled: pages.length < 2, dataset: { action: 'newer' } }),
      ui.button('Older →', move(() => pages.push(next)), 'small', { disabled: !next, dataset: { action: 'older' } }),
      h('span', { dataset: { field: 'pager' }, text: 'Page ' + pages.length + ' · ' + fmt.plural(data.entries.length, 'message', 'messages') +
        (data.truncated ? ' · stopped after reading ' + fmt.int(data.scanned) + ' entries: go on with Older' : '') }));
  }

  return {
    title: 'Messages · ' + topic,
    mount(root, c) {
      ctx = c;
      list = ui.card('Messages', h('span', { class: 'muted small', text: 'newest first over every partition' }));
      pager = h('div', { class: 'pager' });
      list.insertBefore(form((f) => {
        filters = f;
        pages = [''];
        ctx.refresh();
      }), list.body);
      list.append(pager);
      root.append(ui.header('Messages', [['Topics', '#/'], [topic, route('topics', topic)]], topic), list);
    },
    load(signal) {
      const q = new URLSearchParams({ browse: '1', limit: String(LIMIT) });
      for (const [k, v] of Object.entries(filters)) if (v) q.set(k, v);
      if (pages[pages.length - 1]) q.set('after', pages[pages.length - 1]);
      return api.get(base + '?' + q.toString(), signal);
    },
    update(data) {
      next = data.next;
      renderPager(data);
      const key = JSON.stringify(data.entries);
      if (key === shown) return;
      shown = key;
      fill(list.body, table(data.entries, Object.values(filters).some(Boolean)));
    },
  };
}
