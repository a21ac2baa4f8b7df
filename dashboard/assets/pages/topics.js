// Topics: every topic, worst first: its health (no live member, lag growing, nothing
// consumed while messages wait, dead letters arriving, Redis memory above the high-water
// mark or full), the group furthest behind and the
// age of its oldest waiting message, each group's live members, dead letters, publish rate.

import { h, fill, route } from '../dom.js';
import * as api from '../api.js';
import * as ui from '../ui.js';
import * as fmt from '../format.js';

function worstLag(t) {
  const w = t.worstLag;
  if (!w) return { text: '0', class: 'num', attrs: { dataset: { field: 'worst-lag' } } };
  return {
    node: h('span', { class: 'stack' }, h('span', { class: 'strong', text: fmt.int(w.lag) + (w.lagExact ? '' : '+') }),
      h('span', { class: 'muted small', text: w.group })),
    class: 'num', attrs: { dataset: { field: 'worst-lag' } },
  };
}

function lagAge(t) {
  const w = t.worstLag;
  return { text: w ? fmt.duration(w.timeLagMs) : fmt.dash, class: w && w.timeLagMs > 60000 ? 'num lag' : 'num', attrs: { dataset: { field: 'lag-age' } } };
}

function groupList(t) {
  if (!t.consumerGroups.length) return h('span', { class: 'muted', text: 'no group' });
  return h('div', { class: 'group-list' }, t.consumerGroups.map((g) => h('span', { class: 'group-line', dataset: { group: g.name, state: g.health.state } },
    h('span', { class: ['dotc', g.health.state] }),
    h('a', { href: route('topics', t.topic, 'groups', g.name), class: 'name', title: g.name, text: g.name }),
    h('span', { class: g.members ? 'muted' : 'warn strong', dataset: { field: 'members' }, text: fmt.plural(g.members, 'live member', 'live members') }))));
}

function deadLetters(t) {
  if (!t.dlqLength) return { text: '0', class: 'num', attrs: { dataset: { field: 'dlq' } } };
  return {
    node: h('span', { class: 'stack' }, h('a', { href: route('topics', t.topic, 'dlq'), class: 'pill danger', text: fmt.int(t.dlqLength) }),
      t.dlqRecent ? h('span', { class: 'warn small', text: '+' + fmt.int(t.dlqRecent) + ' in 5 min' }) : null),
    class: 'num', attrs: { dataset: { field: 'dlq' } },
  };
}

// problemsRow lists a topic's problems under its row, the table's whole width; null when it
// has none.
function problemsRow(t) {
  const list = ui.problemList(t.health, ui.problemLinks(t.topic));
  if (!list) return null;
  return { full: list, attrs: { class: 'detail', dataset: { problemsOf: t.topic, health: t.health.state } } };
}

export default function topicsPage() {
  let list;
  let head;
  return {
    title: 'Topics',
    mount(root) {
      head = h('div');
      list = ui.card('Topics', h('span', { class: 'muted small', text: 'worst first' }));
      root.append(head, list);
      fill(head, ui.header('Topics'));
    },
    load: (signal) => api.get('topics', signal),
    update(data) {
      const n = data.topics.length;
      const bad = data.topics.filter((t) => t.health.state !== 'ok').length;
      const memory = n ? ' · Redis memory ' + ui.memoryText(data.topics[0].memory) : '';
      fill(head, ui.header('Topics', [], fmt.plural(n, 'topic', 'topics') + ' registered' + (bad ? ' · ' + fmt.plural(bad, 'needs', 'need') + ' attention' : '') + memory));
      const rows = data.topics.flatMap((t) => [{
        cells: [
          { node: h('div', { class: 'health-cell' }, ui.healthPill(t.health), h('span', { class: 'muted small', text: ui.problemCount(t.health) })), attrs: { dataset: { field: 'health' } } },
          h('a', { href: route('topics', t.topic), class: 'strong name', title: t.topic, text: t.topic }),
          worstLag(t),
          lagAge(t),
          { node: groupList(t), attrs: { dataset: { field: 'groups' } } },
          deadLetters(t),
          { node: ui.rate(t.publishRate, t.freshness), class: 'num', attrs: { dataset: { field: 'publish-rate' } } },
          { text: fmt.int(t.partitions), class: 'num', attrs: { dataset: { field: 'partitions' } } },
          { text: fmt.int(t.length), class: 'num' },
        ],
        attrs: { dataset: { topic: t.topic, health: t.health.state } },
      }, problemsRow(t)].filter(Boolean));
      fill(list.body, ui.table([
        { label: 'Health' }, { label: 'Topic' }, { label: 'Worst lag', class: 'num' }, { label: 'Oldest waiting', class: 'num' },
        { label: 'Groups' }, { label: 'Dead letters', class: 'num' }, { label: 'Publish msg/s', class: 'num' },
        { label: 'Partitions', class: 'num' }, { label: 'Length', class: 'num' },
      ], rows, 'No topics yet: they appear with the first publish or subscribe.'));
    },
  };
}
