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
      st.set('rate', ui.rate(info.publishRate, info.freshness));
      st.set('memory', ui.memoryText(info.memory));
      fill(charts.body, renderCharts(rates, info));
      fill(health, healthBlock(topic, info.health), ui.freshnessNote(info.freshness));
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
  const last = pts.length ? pts[pts.length - 1].t : null;
  // A history that stopped being written runs on to now as a gap: nothing is drawn across it.
  const trailing = last !== null && rates.nowMs - last > rates.gapAfterMs;
  const to = last === null ? Date.now() : trailing ? rates.nowMs : last;
  const from = pts.length ? Math.max(pts[0].t, to - rates.windowMs) : to - rates.intervalMs;
  const gaps = gapsOf(pts, trailing ? rates.nowMs : null);
  const color = groupColors(info.groups.map((g) => g.name).concat(rates.groups));
  // line lists a series' points, a null before each point after a gap: the line breaks there.
  const line = (pick) => pts.flatMap((p) => {
    const v = pick(p);
    if (v === undefined) return [];
    return p.gap ? [[p.t, null], [p.t, v]] : [[p.t, v]];
  });
  const series = (pick) => rates.groups.map((g) => ({
    name: g, color: color(g), points: line((p) => (p.groups[g] ? pick(p.groups[g]) : undefined)),
  }));
  // Published is a wide light band under the consumed lines: equal rates show both.
  const throughput = [{ name: 'published', color: 'c7', band: true, points: line((p) => p.publishRate) }]
    .concat(series((g) => g.consumeRate).map((x) => ({ ...x, name: x.name + ' consumed' })));
  const span = pts.length > 1 ? fmt.duration(pts[pts.length - 1].t - pts[0].t) : fmt.dash;
  const f = rates.freshness;
  const note = 'History kept in Redis: ' + span + ' shown of the last ' + fmt.duration(rates.windowMs) + '.' +
    (gaps.length ? ' Shaded: no samples recorded' + (f.notWritten ? ' (the history is not written while Redis refuses writes)' : '') + '.' : '');
  return h('div', null,
    h('p', { class: ['small', 'chart-note', f.stale ? 'stale-note' : 'muted'], dataset: { field: 'history-span' }, text: note }),
    h('div', { class: 'charts' },
      h('div', { dataset: { chart: 'throughput' } }, lineChart({ title: 'Throughput (msg/s)', series: throughput, from, to, gaps })),
      h('div', { dataset: { chart: 'lag' } }, lineChart({ title: 'Lag (messages)', series: series((g) => g.lag), from, to, gaps, format: fmt.int, integer: true }))));
}

// gapsOf lists the spans without samples: before each point marked gap, and from the last
// point to now when it is given.
function gapsOf(pts, now) {
  const gaps = [];
  for (let i = 1; i < pts.length; i++) {
    if (pts[i].gap) gaps.push([pts[i - 1].t, pts[i].t]);
  }
  if (now !== null && pts.length) gaps.push([pts[pts.length - 1].t, now]);
  return gaps;
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

// heldCell is what a group holds back in Redis's memory: "~1.1 MiB" (its unacked messages
// and retries), red for the group holding back the most.
function heldCell(held) {
  if (!held) return h('span', { class: 'muted', text: fmt.dash });
  const bytes = held.unackedBytes + held.retryBytes;
  return h('span', { class: held.cause ? 'pill danger' : bytes ? 'pill warn' : 'muted', title: held.text, text: bytes ? '~' + fmt.bytes(bytes) : '0' });
}

// groupTable lists the groups, each group's problems under its row, the table's width; a
// Held back column while Redis's memory is at or above the high-water mark.
function groupTable(topic, groups) {
  const held = groups.some((g) => g.held);
  const rows = groups.flatMap((g) => {
    const list = ui.problemList(g.health, ui.problemLinks(topic, g.name));
    return [{
      cells: [
        { node: h('div', { class: 'health-cell' }, ui.healthPill(g.health), h('span', { class: 'muted small', text: ui.problemCount(g.health) })), attrs: { dataset: { field: 'health' } } },
        h('a', { href: route('topics', topic, 'groups', g.name), class: 'strong name', title: g.name, text: g.name }),
        { text: fmt.int(g.consumers), class: 'num' },
        { text: fmt.int(g.pending), class: 'num' },
        { text: fmt.int(g.lag) + (g.lagUnknown ? '+' : ''), class: 'num', attrs: { dataset: { field: 'lag' } } },
        { text: fmt.duration(g.timeLagMs), class: 'num' },
        { text: fmt.rate(g.consumeRate), class: 'num' },
        { text: g.lastSeen ? fmt.time(g.lastSeen) : fmt.dash, class: 'nowrap', title: 'when a member was last seen (its last heartbeat)' },
        ...(held ? [{ node: heldCell(g.held), attrs: { dataset: { field: 'held' } } }] : []),
      ],
      attrs: { dataset: { group: g.name, health: g.health.state } },
    }, list ? { full: list, attrs: { class: 'detail', dataset: { problemsOf: g.name, health: g.health.state } } } : null].filter(Boolean);
  });
  return ui.table([{ label: 'Health' }, { label: 'Group' }, { label: 'Live members', class: 'num' }, { label: 'Pending', class: 'num' },
    { label: 'Lag', class: 'num' }, { label: 'Oldest waiting', class: 'num' }, { label: 'Consume msg/s', class: 'num' }, { label: 'Member last seen' },
    ...(held ? [{ label: 'Held back' }] : [])],
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
