// A consumer group: first its health (the Topics page's rules: every problem with since when
// and the next step), then members with their heartbeats and the partitions they hold,
// per-partition position and lag, pending entries with idle time and deliveries, whether an
// operator paused it, and (when writes are enabled) pause and resume, and reset offset.

import { h, fill, route } from '../dom.js';
import * as api from '../api.js';
import * as ui from '../ui.js';
import * as fmt from '../format.js';

export default function groupPage(topic, group) {
  let health;
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
      health = h('div', { id: 'group-health' });
      st = ui.stats([['members', 'Live members'], ['seen', 'Member last seen', 'small'], ['lag', 'Lag'], ['timelag', 'Oldest waiting'], ['pending', 'Pending'],
        ['unowned', 'Unowned partitions'], ['delivery', 'Delivery'], ['retention', 'Retention'], ['held', 'Memory held back', 'small']]);
      members = ui.card('Members');
      parts = ui.card('Partitions');
      pending = ui.card('Pending entries', h('span', { class: 'muted small', text: 'longest idle first' }));
      pause = pauseCard(topic, group, ctx);
      root.append(ui.header(group, [['Topics', '#/'], [topic, route('topics', topic)]], 'Consumer group of ' + topic), health, st, pause.el, members, parts, pending);
      root.append(ctx.canWrite ? resetCard(topic, group, ctx) : h('p', { class: 'muted small readonly-note', text: 'Read-only: offsets can be reset when the dashboard allows writes.' }));
    },
    async load(signal) {
      const base = api.path('topics', topic, 'groups', group);
      const [info, pend] = await Promise.all([api.get(base, signal), api.get(base + '/pending?limit=100', signal)]);
      return { info, pend };
    },
    update({ info, pend }) {
      const live = info.members.filter((m) => m.live).length;
      fill(health, ui.healthBlock(info.health, headline(group, info.health, live), ui.problemLinks(topic, group)), ui.freshnessNote(info.freshness));
      // Running is green only for a healthy group: a group nobody consumes is not "running",
      // and one whose outage state is unknown is not known to run.
      const outages = info.partitions.filter((p) => p.outage).length;
      const unknown = info.outagesUnknown.length;
      const delivery = info.paused ? 'danger' : outages || unknown ? 'warn' : info.health.state === 'ok' ? 'ok' : 'muted';
      const deliveryText = info.paused ? 'paused' : outages ? outages + ' paused' : unknown ? 'unknown' : 'running';
      st.set('delivery', h('span', { class: ['pill', delivery], dataset: { field: 'delivery' }, title: unknown ? info.outageUnknown : null, text: deliveryText }));
      pause.update(info, live);
      st.set('members', h('span', { class: live ? '' : 'warn', text: fmt.int(live) }));
      st.set('seen', lastSeen(info));
      st.set('pending', fmt.int(info.pending));
      st.set('lag', fmt.int(info.lag));
      st.set('timelag', fmt.duration(info.timeLagMs));
      st.set('unowned', fmt.int(info.unowned.length));
      st.set('retention', retentionPill(info));
      st.set('held', heldText(info.held));
      st.show('held', Boolean(info.held)); // while Redis memory is at or above the high-water mark
      fill(members.body, memberTable(info));
      fill(parts.body, partitionTable(info.partitions, info.time));
      fill(pending.body, pendingTable(pend.entries));
    },
  };
}

// retentionPill says whether retention waits for the group and, while Redis's memory is at or
// above the high-water mark, whether that holds memory back: a group holding back the most
// is not green.
function retentionPill(info) {
  const bytes = info.held ? info.held.unackedBytes + info.held.retryBytes : 0;
  if (!info.expired && bytes > 0) {
    return h('span', { class: ['pill', info.held.cause ? 'danger' : 'warn'], dataset: { field: 'retention' }, title: info.held.text, text: 'holds ~' + fmt.bytes(bytes) });
  }
  return h('span', {
    class: ['pill', info.expired ? 'danger' : 'ok'], dataset: { field: 'retention' },
    title: info.expired ? 'No live member for the group expiry: retention no longer waits for it (its offsets stay, what it loses is counted)' : 'Retention waits for this group',
    text: info.expired ? 'expired' : 'waits for it',
  });
}

// heldText is what the group holds back in Redis's memory, shown while memory is at or above
// the high-water mark (null below it: the card is hidden).
function heldText(held) {
  if (!held) return null;
  const parts = [fmt.int(held.unacked) + ' unacked'];
  if (held.retries) parts.push(fmt.int(held.retries) + ' retries');
  if (held.cause) parts.push('the most of any group');
  return h('span', { class: 'stack', dataset: { field: 'held', cause: held.cause ? '1' : '0' }, title: held.text },
    h('span', { class: held.cause ? 'danger-text' : '', text: '~' + fmt.bytes(held.unackedBytes + held.retryBytes) }),
    h('span', { class: 'muted small wrap', text: parts.join(' · ') }));
}

// headline says in a sentence how the group is.
function headline(group, hv, live) {
  if (hv.state === 'ok') return group + ' is healthy: ' + fmt.plural(live, 'live member', 'live members') + ', no problem';
  return group + ' needs attention: ' + ui.problemCount(hv);
}

// lastSeen is when a member was last seen (its last heartbeat), how long ago (on the server's
// clock), and which one, with its host and PID.
function lastSeen(info) {
  if (!info.lastSeen) return h('span', { class: 'muted', dataset: { field: 'last-seen' }, text: 'never recorded' });
  const m = info.lastMember;
  return h('span', { class: 'stack', dataset: { field: 'last-seen' }, title: fmt.time(info.lastSeen) }, h('span', { text: ago(info.lastSeen, info.time) }),
    h('span', { class: 'muted small', text: 'at ' + fmt.clock(info.lastSeen) + (m && m.left ? ', left' : '') }),
    m ? h('span', { class: 'muted small wrap', dataset: { field: 'last-member' }, text: m.text }) : null);
}

// process is a member's host and PID, a dash when its streamq version did not record them.
function processCell(m) {
  if (!m.pid) return h('span', { class: 'muted', text: fmt.dash });
  return ui.mono((m.host ? m.host + ' ' : '') + 'pid ' + m.pid);
}

// ago is how long before now (both RFC 3339) t was: "12m 3s ago".
function ago(t, now) {
  const ms = Date.parse(now) - Date.parse(t);
  return ms > 0 ? fmt.duration(ms) + ' ago' : 'now';
}

// heartbeat says when a member's heartbeat expires, or expired (it stopped without leaving).
function heartbeat(m, now) {
  if (!m.heartbeatExpires) return h('span', { class: 'muted', title: 'holds a lease, no longer in the membership', text: fmt.dash });
  const ms = Date.parse(m.heartbeatExpires) - Date.parse(now);
  const at = fmt.time(m.heartbeatExpires);
  if (ms > 0) return h('span', { title: 'expires ' + at, text: 'renewed, expires in ' + fmt.duration(ms) });
  return h('span', { class: 'warn', title: 'expired ' + at, text: 'expired ' + fmt.duration(-ms) + ' ago · ' + at });
}

function memberTable(info) {
  const rows = info.members.map((m) => [
    { node: ui.mono(m.name) },
    { node: processCell(m), attrs: { dataset: { field: 'process' } } },
    { node: h('span', { class: ['pill', m.live ? 'ok' : 'muted'], text: m.live ? 'live' : 'heartbeat expired' }) },
    { node: heartbeat(m, info.time), attrs: { dataset: { field: 'heartbeat' } } },
    { node: m.partitions.length ? h('span', { class: 'chips' }, m.partitions.map((p) => h('span', { class: 'chip', text: String(p) }))) : h('span', { class: 'muted', text: 'none' }) },
  ]);
  return ui.table([{ label: 'Member' }, { label: 'Host and PID' }, { label: 'Status' }, { label: 'Heartbeat' }, { label: 'Owned partitions' }], rows,
    'No member: nobody consumes this group now.' + lastMemberText(info), (i) => ({ dataset: { member: info.members[i].name } }));
}

// lastMemberText says which member was seen last, and when: its last heartbeat, or its leave.
function lastMemberText(info) {
  if (!info.lastSeen) return '';
  const m = info.lastMember;
  const who = m ? ' The last member, ' + m.text + ', ' + (m.left ? 'left ' : 'sent its last heartbeat ') : ' A member was last seen ';
  return who + ago(info.lastSeen, info.time) + ' (' + fmt.time(info.lastSeen) + ').';
}

// delivery says whether a partition hands out messages, or waits out a downstream outage, or
// cannot tell (Redis refuses the outage record's write).
function delivery(p, now) {
  const o = p.outage;
  if (!o && p.outageUnknown) return h('span', { class: 'warn', dataset: { unknown: '1' }, text: p.outageUnknown });
  if (!o) return h('span', { class: 'muted', text: 'running' });
  const next = Date.parse(o.nextProbe) - Date.parse(now);
  const probe = next > 0 ? 'next probe in ' + fmt.duration(next) : 'probing now';
  return h('span', { class: 'warn', title: o.reason + ' (' + o.probesFailed + ' probes failed, held by ' + o.member + ')',
    text: 'paused: downstream failing since ' + fmt.time(o.since) + ' (' + ago(o.since, now) + '), ' + probe });
}

function partitionTable(parts, now) {
  const rows = parts.map((p) => [
    { text: String(p.partition), class: 'strong' },
    { node: delivery(p, now), attrs: { dataset: { field: 'partition-delivery' } } },
    { node: p.leaseOwner ? ui.mono(p.leaseOwner) : h('span', { class: 'muted', text: 'free' }) },
    { text: fmt.duration(p.leaseTtlMs), class: 'num' },
    { text: fmt.int(p.pending), class: 'num' },
    { text: fmt.int(p.lag) + (p.lagExact ? '' : '+'), class: p.lag > 0 ? 'num lag' : 'num' },
    { text: fmt.duration(p.timeLagMs), class: 'num' },
    { node: ui.mono(p.lastDeliveredId) },
    { node: ui.mono(p.commitFrontier) },
  ]);
  return ui.table([{ label: 'Partition' }, { label: 'Delivery' }, { label: 'Lease owner' }, { label: 'Lease TTL', class: 'num' }, { label: 'Pending', class: 'num' },
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

// previewText says what a reset preview does: skip or redeliver how many messages.
function previewText(pv) {
  const more = pv.exact ? '' : ' at least';
  const parts = [];
  if (pv.skip) parts.push('skips' + more + ' ' + fmt.plural(pv.skip, 'message', 'messages') + ' (never delivered)');
  if (pv.redeliver) parts.push('redelivers' + more + ' ' + fmt.plural(pv.redeliver, 'message', 'messages'));
  return parts.length ? 'This reset ' + parts.join(' and ') + '.' : 'This reset skips and redelivers nothing.';
}

function previewTable(pv) {
  const rows = pv.partitions.map((p) => [
    { text: String(p.partition), class: 'num' },
    { node: p.created ? h('span', { class: 'muted', text: 'no group: created' }) : ui.mono(p.current) },
    { node: ui.mono(p.target) },
    { text: fmt.int(p.skip) + (p.exact ? '' : '+'), class: p.skip ? 'num lag' : 'num', attrs: { dataset: { field: 'skip' } } },
    { text: fmt.int(p.redeliver) + (p.exact ? '' : '+'), class: p.redeliver ? 'num warn' : 'num', attrs: { dataset: { field: 'redeliver' } } },
    { text: fmt.int(p.pending), class: 'num' },
  ]);
  return ui.table([{ label: 'Partition', class: 'num' }, { label: 'Now after' }, { label: 'Would be after' }, { label: 'Skips', class: 'num' },
    { label: 'Redelivers', class: 'num' }, { label: 'Pending (kept)', class: 'num' }], rows, 'No partitions.',
  (i) => ({ dataset: { partition: pv.partitions[i].partition } }));
}

// resetCard moves the group's offset: nothing is chosen until the operator types or picks
// an offset; each choice is previewed (per partition, what it skips or redelivers), and the
// confirmation says how many.
function resetCard(topic, group, ctx) {
  const c = ui.card('Reset offset');
  const base = api.path('topics', topic, 'groups', group);
  const input = h('input', { class: 'input', type: 'text', 'aria-label': 'New offset', name: 'offset',
    placeholder: 'choose: beginning, latest, a stream id, 2026-11-29T10:00:00Z or @unix-ms' });
  const preview = h('div', { class: 'preview', dataset: { field: 'reset-preview' } });
  let current = null; // the preview of input's value, null while none
  let timer = 0;
  let asked = 0;
  const submitBtn = ui.button('Reset offset…', () => submit(), 'danger', { disabled: true, dataset: { action: 'reset-offset' } });
  const load = async () => {
    const to = input.value.trim();
    current = null;
    submitBtn.disabled = true;
    if (!to) {
      fill(preview);
      return;
    }
    const n = ++asked;
    try {
      const pv = await api.get(base + '/reset-preview?to=' + encodeURIComponent(to));
      if (n !== asked) return;
      current = { to, pv };
      submitBtn.disabled = false;
      fill(preview, h('p', { class: ['summary', pv.skip ? 'skip' : pv.redeliver ? 'redeliver' : ''], dataset: { field: 'preview-summary' }, text: previewText(pv) }), previewTable(pv));
    } catch (err) {
      if (n === asked) fill(preview, h('p', { class: 'warn', dataset: { field: 'preview-summary' }, text: err.message }));
    }
  };
  input.addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(load, 250);
  });
  const preset = (v) => ui.button(v, () => {
    input.value = v;
    load();
  }, '', { dataset: { preset: v } });
  const submit = async () => {
    if (!current || current.to !== input.value.trim()) return;
    const { to, pv } = current;
    const ok = await ui.confirm({
      title: 'Reset the offset of ' + group + '?',
      body: [h('p', null, 'Group ', h('strong', { text: group }), ' on topic ', h('strong', { text: topic }), ' will continue from ', h('strong', { text: to }), ' on every partition.'),
        h('p', { class: 'strong', dataset: { field: 'confirm-count' }, text: previewText(pv) }),
        h('p', { class: 'muted', text: 'Counted just now; messages published meanwhile are not in it. Pending entries (' + fmt.int(pv.pending) + ') stay pending and are re-delivered by each partition\'s owner.' })],
      confirmLabel: 'Reset offset', danger: true,
    });
    if (!ok) return;
    try {
      const res = await api.post(base + '/reset-offset', { to });
      ui.toast(res.note);
      ctx.refresh();
      load();
    } catch (err) {
      ui.toast('Reset failed: ' + err.message, 'error');
    }
  };
  fill(c.body, h('div', { class: 'form-row' }, input, preset('beginning'), preset('latest'), submitBtn),
    h('p', { class: 'muted small', text: 'beginning, latest, a stream id (1700000000000-0), an RFC 3339 time (first entry at or after it) or @unix-milliseconds. The preview shows what it skips or redelivers before anything moves.' }),
    preview);
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
    update(info, live) {
      paused = info.paused;
      const outages = info.partitions.filter((p) => p.outage).map((p) => p.partition);
      let running = live ? 'Running: members deliver as usual.' : 'Not paused, but no member is live: nothing is delivered.';
      if (live && outages.length) {
        running = 'Waiting out a downstream outage on partition' + (outages.length > 1 ? 's ' : ' ') + outages.join(', ') +
          ': they hand out nothing until a probe succeeds, then resume by themselves' +
          (outages.length < info.partitions.length ? ' (the others deliver as usual).' : '.');
      } else if (info.outagesUnknown.length) {
        const u = info.outagesUnknown;
        running = info.outageUnknown[0].toUpperCase() + info.outageUnknown.slice(1) + ': partition' + (u.length > 1 ? 's ' : ' ') + u.join(', ') +
          ' may be waiting out a downstream outage that could not be recorded.';
      }
      const state = paused
        ? h('p', { dataset: { field: 'pause-state' } }, 'Paused by an operator since ', h('strong', { text: fmt.time(info.pausedAt) }), '.')
        : h('p', { dataset: { field: 'pause-state' }, text: running });
      const button = ctx.canWrite
        ? ui.button(paused ? 'Resume group…' : 'Pause group…', act, paused ? '' : 'danger', { dataset: { action: paused ? 'resume-group' : 'pause-group' } })
        : h('p', { class: 'muted small', text: 'Read-only: the group can be paused when the dashboard allows writes.' });
      fill(el.body, h('div', { class: 'card-pad' }, state, button));
    },
  };
}
