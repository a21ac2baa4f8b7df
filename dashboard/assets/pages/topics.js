// Topics: every topic with partitions, length, groups, dead letters and publish rate.

import { h, fill, route } from '../dom.js';
import * as api from '../api.js';
import * as ui from '../ui.js';
import * as fmt from '../format.js';

export default function topicsPage() {
  let list;
  let head;
  return {
    title: 'Topics',
    mount(root) {
      head = h('div');
      list = ui.card('Topics');
      root.append(head, list);
      fill(head, ui.header('Topics'));
    },
    load: (signal) => api.get('topics', signal),
    update(data) {
      const n = data.topics.length;
      fill(head, ui.header('Topics', [], fmt.plural(n, 'topic', 'topics') + ' registered'));
      const rows = data.topics.map((t) => [
        h('a', { href: route('topics', t.topic), class: 'strong', text: t.topic }),
        { text: fmt.int(t.partitions), class: 'num', attrs: { dataset: { field: 'partitions' } } },
        { text: fmt.int(t.length), class: 'num' },
        { text: fmt.int(t.groups), class: 'num' },
        { node: t.dlqLength > 0 ? h('a', { href: route('topics', t.topic, 'dlq'), class: 'pill danger', text: fmt.int(t.dlqLength) }) : '0', class: 'num' },
        { text: fmt.rate(t.publishRate), class: 'num' },
      ]);
      fill(list.body, ui.table([
        { label: 'Topic' }, { label: 'Partitions', class: 'num' }, { label: 'Length', class: 'num' },
        { label: 'Groups', class: 'num' }, { label: 'Dead letters', class: 'num' }, { label: 'Publish msg/s', class: 'num' },
      ], rows, 'No topics yet: they appear with the first publish or subscribe.', (i) => ({ dataset: { topic: data.topics[i].topic } })));
    },
  };
}
