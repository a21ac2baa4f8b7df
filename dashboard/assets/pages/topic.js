// A topic: totals (with the Redis servers' memory), a live chart of publish and consume rates and of lag, the length
// retention, the partitions with the entries over max length and the group holding them and
// each group's lease owner and lag, the groups, and the newest messages.

import { h, fill, route } from '../dom.js';
import * as api from '../api.js';
import * as ui from '../ui.js';
import * as fmt from '../format.js';
import { lineChart } from '../chart.js';

const RECENT = 10;

export default function topicPage(topic) {
  let st;
  let charts;
  let parts;
  let retention;
  let groups;
  let recent;
  let health;
  return {
    title: topic,
    mount(root) {
      st = ui.stats([['partitions', 'Partitions'], ['length', 'Length'], ['groups', 'Consumer groups'],
        ['lag', 'Total lag'], ['over', 'Over max length'], ['dlq', 'Dead letters'], ['rate', 'Publish msg/s'],
        ['memory', 'Redis memory', 'small']]);
      charts = ui.card('Last hour');
      retention = h('span', { class: 'muted', id: 'retention' });
      parts = ui.card('Partitions', retention);
      groups = ui.card('Consumer groups');
      recent = ui.card('Newest messages', h('a', { href: route('topics', topic, 'messages'), class: 'small', dataset: { action: 'browse' }, text: 'Browse messages →' }));
      health = h('div', { id: 'topic-health' });
      root.append(ui.header(topic, [['Topics', '#/']]), health, st, charts, parts, groups, recent);
    },
    async load(signal) {
      const base = api.path('topics', topic);
      const [info, rates, msgs] = await Promise.all([
        api.get(base, signal), api.get(base + '/rates', signal), api.get(base + '/messages?limit=' + RECENT, signal),
      ]);
      return { info, rates, msgs };
    },
    update({ info, rates, msgs }) {
      st.set('partitions', fmt.int(info.partitions));
      st.set('length', fmt.int(info.length));
      st.set('groups', fmt.int(info.groups.length));
      st.set('lag', fmt.int(info.groups.reduce((n, g) => n + g.lag, 0)));
      st.set('over', fmt.int(info.overMaxLen));
      st.set('dlq', fmt.int(info.dlqLength), info.dlqLength > 0 ? route('topics', topic, 'dlq') : null);
      st.set('rate', fmt.rate(info.publishRate));
      st.set('memory', ui.memoryText(info.memory));
      fill(charts.body, renderCharts(rates, info));
      fill(health, healthBlock(topic, info.health));
      fill(retention, retentionText(info.retention));
      fill(parts.body, partitionTable(info));
      fill(groups.body, groupTable(topic, info.groups));
      fill(recent.body, messageTable(msgs.entries));
    },
  };
}

// groupColor gives each group of the topic one colour class for every chart: c0..c6 by its
// place among the topic's groups (sorted by name); c7 is the published messages'.
export function groupColors(names) {
  const sorted = [...new Set(names)].sort();
  const map = new Map(sorted.map((g, i) => [g, 'c' + (i % 7)]));
  return (g) => map.get(g) || 'c6';
}

function renderCharts(rates, info) {
  const pts = rates.points;
  const to = pts.length ? pts[pts.length - 1].t : Date.now();
  const from = pts.length ? Math.max(pts[0].t, to - rates.windowMs) : to - rates.intervalMs;
  const color = groupColors(info.groups.map((g) => g.name).concat(rates.groups));
  const series = (pick) => rates.groups.map((g) => ({
    name: g, color: color(g), points: pts.filter((p) => p.groups[g] && pick(p.groups[g]) !== null).map((p) => [p.t, pick(p.groups[g])]),
  }));
  // Published is a wide light band under the consumed lines: equal rates show both.
  const throughput = [{ name: 'published', color: 'c7', band: true, points: pts.map((p) => [p.t, p.publishRate]) }]
    .concat(series((g) => g.consumeRate).map((x) => ({ ...x, name: x.name + ' consumed' })));
  const span = pts.length > 1 ? fmt.duration(pts[pts.length - 1].t - pts[0].t) : fmt.dash;
  return h('div', null,
    h('p', { class: 'muted small chart-note', dataset: { field: 'history-span' }, text: 'History kept in Redis: ' + span + ' shown of the last ' + fmt.duration(rates.windowMs) + '.' }),
    h('div', { class: 'charts' },
      h('div', { dataset: { chart: 'throughput' } }, lineChart({ title: 'Throughput (msg/s)', series: throughput, from, to })),
      h('div', { dataset: { chart: 'lag' } }, lineChart({ title: 'Lag (messages)', series: series((g) => g.lag), from, to, format: fmt.int, integer: true }))));
}

function partitionTable(info) {
  const gs = info.groups;
  const head = [
    [{ label: 'Partition', rows: 2 }, { label: 'Length', class: 'num', rows: 2 }, { label: 'First id', rows: 2 },
      { label: 'Last id', rows: 2 }, { label: 'DLQ', class: 'num', rows: 2 },
      { label: 'Over max', class: 'num', rows: 2 }, { label: 'Held by', rows: 2 },
      ...gs.map((g) => ({ label: g.name, span: 2, class: 'group-head' }))],
    gs.flatMap(() => [{ label: 'Owner', class: 'sub' }, { label: 'Lag', class: 'num sub' }]),
  ];
  if (!gs.length) head.pop();
  const rows = info.perPartition.map((p) => [
    { text: String(p.partition), class: 'strong' },
    { text: fmt.int(p.length), class: 'num', attrs: { dataset: { field: 'length' } } },
    { node: ui.mono(p.firstId), title: fmt.idTime(p.firstId) },
    { node: ui.mono(p.lastId), title: fmt.idTime(p.lastId) },
    { text: fmt.int(p.dlqLength), class: p.dlqLength ? 'num warn' : 'num' },
    { text: fmt.int(p.overMaxLen), class: p.holder ? 'num lag' : 'num', attrs: { dataset: { field: 'over' } } },
    { node: holder(p), attrs: { dataset: { field: 'holder' } } },
    ...p.groups.flatMap((g) => [
      { node: g.exists ? owner(g) : h('span', { class: 'muted', text: 'no group' }), attrs: { dataset: { group: g.group, field: 'owner' } } },
      { text: g.exists ? fmt.int(g.lag) : fmt.dash, class: g.lag > 0 ? 'num lag' : 'num', attrs: { dataset: { group: g.group, field: 'lag' } } },
    ]),
  ]);
  return ui.table(head, rows, 'No partitions.', (i) => ({ dataset: { partition: info.perPartition[i].partition } }));
}

// retentionText describes the topic's length retention.
function retentionText(r) {
  if (r.maxLen < 0) return 'Length retention off';
  return 'Max length ' + fmt.int(r.maxLen) + ' per partition' + (r.recorded ? '' : ' (default)') +
    ' · ' + (r.exact ? 'exact' : 'approximate') + ' · ' + (r.policy === 'hard' ? 'hard cap' : 'acked entries only');
}

// holder is the group whose position stops the trim of a partition over max length.
function holder(p) {
  if (!p.holder) return h('span', { class: 'muted', text: fmt.dash });
  return h('span', { class: 'mono', title: 'still needs ' + p.holderNeeds + ' and later', text: p.holder });
}

function owner(g) {
  if (!g.owner) return h('span', { class: 'muted', text: 'free' });
  return h('span', { class: 'mono owner', title: 'lease expires in ' + fmt.duration(g.leaseTtlMs), text: g.owner });
}

// groupTable lists the groups, each group's problems under its row, the table's width.
function groupTable(topic, groups) {
  const rows = groups.flatMap((g) => {
    const list = ui.problemList(g.health, ui.problemLinks(topic, g.name));
    return [{
      cells: [
        { node: h('div', { class: 'health-cell' }, ui.healthPill(g.health), h('span', { class: 'muted small', text: ui.problemCount(g.health) })), attrs: { dataset: { field: 'health' } } },
        h('a', { href: route('topics', topic, 'groups', g.name), class: 'strong', text: g.name }),
        { text: fmt.int(g.consumers), class: 'num' },
        { text: fmt.int(g.pending), class: 'num' },
        { text: fmt.int(g.lag) + (g.lagUnknown ? '+' : ''), class: 'num', attrs: { dataset: { field: 'lag' } } },
        { text: fmt.duration(g.timeLagMs), class: 'num' },
        { text: fmt.rate(g.consumeRate), class: 'num' },
        { text: g.lastSeen ? fmt.time(g.lastSeen) : fmt.dash, class: 'nowrap', title: 'when a member last held a partition' },
      ],
      attrs: { dataset: { group: g.name, health: g.health.state } },
    }, list ? { full: list, attrs: { class: 'detail', dataset: { problemsOf: g.name, health: g.health.state } } } : null].filter(Boolean);
  });
  return ui.table([{ label: 'Health' }, { label: 'Group' }, { label: 'Live members', class: 'num' }, { label: 'Pending', class: 'num' },
    { label: 'Lag', class: 'num' }, { label: 'Oldest waiting', class: 'num' }, { label: 'Consume msg/s', class: 'num' }, { label: 'Member last seen' }],
  rows, 'No consumer group reads this topic yet.');
}

// healthBlock leads the page with the topic's problems, full width; nothing when healthy.
function healthBlock(topic, hv) {
  if (!hv || hv.state === 'ok') return null;
  return ui.healthBlock(hv, topic + ' needs attention: ' + ui.problemCount(hv), ui.problemLinks(topic));
}

function messageTable(entries) {
  const rows = entries.map((e) => [
    { text: String(e.partition), class: 'num' },
    { node: ui.mono(e.id) },
    { text: fmt.time(e.time), class: 'nowrap' },
    { node: ui.metadataList(e.metadata), class: 'meta-cell' },
    { node: e.malformed ? h('span', { class: 'warn', text: 'malformed: ' + e.malformed }) : ui.payload(e.payload), class: 'payload-cell' },
  ]);
  return ui.table([{ label: 'Partition', class: 'num' }, { label: 'Id' }, { label: 'Time' }, { label: 'Metadata' }, { label: 'Payload' }],
    rows, 'The topic is empty.');
}
