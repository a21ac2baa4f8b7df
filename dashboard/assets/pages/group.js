// A consumer group: members and the partitions they hold, per-partition position and lag,
// pending entries with idle time and deliveries, whether an operator paused it, and (when
// writes are enabled) pause and resume, and reset offset.

import { h, fill, route } from '../dom.js';
import * as api from '../api.js';
import * as ui from '../ui.js';
import * as fmt from '../format.js';

export default function groupPage(topic, group) {
  let st;
  let members;
  let parts;
  let pending;
  let pause;
  let ctx;
  return {
    title: group + ' · ' + topic,
    mount(root, c) {
      ctx = c;
      st = ui.stats([['delivery', 'Delivery'], ['members', 'Live members'], ['pending', 'Pending'], ['lag', 'Lag'], ['timelag', 'Time lag'], ['unowned', 'Unowned partitions']]);
      members = ui.card('Members');
      parts = ui.card('Partitions');
      pending = ui.card('Pending entries', h('span', { class: 'muted small', text: 'longest idle first' }));
      pause = pauseCard(topic, group, ctx);
      root.append(ui.header(group, [['Topics', '#/'], [topic, route('topics', topic)]], 'Consumer group'), st, pause.el, members, parts, pending);
      root.append(ctx.canWrite ? resetCard(topic, group, ctx) : h('p', { class: 'muted small readonly-note', text: 'Read-only: offsets can be reset when the dashboard allows writes.' }));
    },
    async load(signal) {
      const base = api.path('topics', topic, 'groups', group);
      const [info, pend] = await Promise.all([api.get(base, signal), api.get(base + '/pending?limit=100', signal)]);
      return { info, pend };
    },
    update({ info, pend }) {
      st.set('delivery', h('span', { class: ['pill', info.paused ? 'danger' : 'ok'], dataset: { field: 'delivery' }, text: info.paused ? 'paused' : 'running' }));
      pause.update(info);
      st.set('members', fmt.int(info.members.filter((m) => m.live).length));
      st.set('pending', fmt.int(info.pending));
      st.set('lag', fmt.int(info.lag));
      st.set('timelag', fmt.duration(info.timeLagMs));
      st.set('unowned', fmt.int(info.unowned.length));
      fill(members.body, memberTable(info.members));
      fill(parts.body, partitionTable(info.partitions));
      fill(pending.body, pendingTable(pend.entries));
    },
  };
}

function memberTable(members) {
  const rows = members.map((m) => [
    { node: ui.mono(m.name) },
    { node: h('span', { class: ['pill', m.live ? 'ok' : 'muted'], text: m.live ? 'live' : 'heartbeat expired' }) },
    { node: m.partitions.length ? h('span', { class: 'chips' }, m.partitions.map((p) => h('span', { class: 'chip', text: String(p) }))) : h('span', { class: 'muted', text: 'none' }) },
  ]);
  return ui.table([{ label: 'Member' }, { label: 'Status' }, { label: 'Owned partitions' }], rows, 'No live member: nobody consumes this group now.');
}

function partitionTable(parts) {
  const rows = parts.map((p) => [
    { text: String(p.partition), class: 'strong' },
    { node: p.leaseOwner ? ui.mono(p.leaseOwner) : h('span', { class: 'muted', text: 'free' }) },
    { text: fmt.duration(p.leaseTtlMs), class: 'num' },
    { text: fmt.int(p.pending), class: 'num' },
    { text: fmt.int(p.lag) + (p.lagExact ? '' : '+'), class: p.lag > 0 ? 'num lag' : 'num' },
    { text: fmt.duration(p.timeLagMs), class: 'num' },
    { node: ui.mono(p.lastDeliveredId) },
    { node: ui.mono(p.commitFrontier) },
  ]);
  return ui.table([{ label: 'Partition' }, { label: 'Lease owner' }, { label: 'Lease TTL', class: 'num' }, { label: 'Pending', class: 'num' },
    { label: 'Lag', class: 'num' }, { label: 'Time lag', class: 'num' }, { label: 'Last delivered' }, { label: 'Commit frontier' }], rows, 'No partitions.',
  (i) => ({ dataset: { partition: parts[i].partition } }));
}

function pendingTable(entries) {
  const rows = entries.map((e) => [
    { text: String(e.partition), class: 'num' },
    { node: ui.mono(e.id) },
    { node: ui.mono(e.consumer) },
    { text: fmt.duration(e.idleMs), class: 'num' },
    { text: fmt.int(e.deliveries), class: e.deliveries > 1 ? 'num warn' : 'num' },
  ]);
  return ui.table([{ label: 'Partition', class: 'num' }, { label: 'Id' }, { label: 'Consumer' }, { label: 'Idle', class: 'num' },
    { label: 'Deliveries', class: 'num' }], rows, 'Nothing pending: every delivered entry was acked.');
}

function resetCard(topic, group, ctx) {
  const c = ui.card('Reset offset');
  const input = h('input', { class: 'input', type: 'text', value: 'latest', 'aria-label': 'New offset',
    placeholder: 'beginning, latest, a stream id, 2026-11-29T10:00:00Z or @unix-ms' });
  const preset = (v) => ui.button(v, () => { input.value = v; });
  const submit = async () => {
    const to = input.value.trim();
    if (!to) return;
    const ok = await ui.confirm({
      title: 'Reset the offset of ' + group + '?',
      body: [h('p', null, 'Group ', h('strong', { text: group }), ' on topic ', h('strong', { text: topic }), ' will continue from ', h('strong', { text: to }), ' on every partition.'),
        h('p', { class: 'muted', text: 'Moving back re-delivers entries; moving forward skips them. Pending entries stay pending and are re-delivered by each partition\'s owner.' })],
      confirmLabel: 'Reset offset', danger: true,
    });
    if (!ok) return;
    try {
      const res = await api.post(api.path('topics', topic, 'groups', group, 'reset-offset'), { to });
      ui.toast(res.note);
      ctx.refresh();
    } catch (err) {
      ui.toast('Reset failed: ' + err.message, 'error');
    }
  };
  fill(c.body, h('div', { class: 'form-row' }, input, preset('beginning'), preset('latest'),
    ui.button('Reset offset…', submit, 'danger', { dataset: { action: 'reset-offset' } })),
  h('p', { class: 'muted small', text: 'beginning, latest, a stream id (1700000000000-0), an RFC 3339 time (first entry at or after it) or @unix-milliseconds.' }));
  return c;
}

// pauseCard shows whether an operator paused the group and, when writes are enabled, pauses
// or resumes it for every member after a confirmation.
function pauseCard(topic, group, ctx) {
  const el = ui.card('Delivery');
  let paused = false;
  const act = async () => {
    const verb = paused ? 'resume' : 'pause';
    const ok = await ui.confirm({
      title: (paused ? 'Resume ' : 'Pause ') + group + '?',
      body: paused
        ? [h('p', null, 'Every member of ', h('strong', { text: group }), ' on ', h('strong', { text: topic }), ' goes on where it stopped, within its rebalance interval.')]
        : [h('p', null, 'Every member of ', h('strong', { text: group }), ' on ', h('strong', { text: topic }), ' stops reading and delivering within its rebalance interval, keeping its partitions; messages in flight finish.'),
          h('p', { class: 'muted', text: 'Messages published meanwhile wait. Members that restart stay paused until the group is resumed.' })],
      confirmLabel: paused ? 'Resume group' : 'Pause group', danger: !paused,
    });
    if (!ok) return;
    try {
      await api.post(api.path('topics', topic, 'groups', group, verb), {});
      ui.toast(paused ? 'Group resumed' : 'Group paused');
      ctx.refresh();
    } catch (err) {
      ui.toast((paused ? 'Resume' : 'Pause') + ' failed: ' + err.message, 'error');
    }
  };
  return {
    el,
    update(info) {
      paused = info.paused;
      const state = paused
        ? h('p', { dataset: { field: 'pause-state' } }, 'Paused by an operator since ', h('strong', { text: fmt.time(info.pausedAt) }), '.')
        : h('p', { dataset: { field: 'pause-state' }, text: 'Running: members deliver as usual.' });
      const button = ctx.canWrite
        ? ui.button(paused ? 'Resume group…' : 'Pause group…', act, paused ? '' : 'danger', { dataset: { action: paused ? 'resume-group' : 'pause-group' } })
        : h('p', { class: 'muted small', text: 'Read-only: the group can be paused when the dashboard allows writes.' });
      fill(el.body, state, button);
    },
  };
}
