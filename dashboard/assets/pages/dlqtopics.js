// Dead letters: the topics whose DLQ holds entries.

import { h, fill, route } from '../dom.js';
import * as api from '../api.js';
import * as ui from '../ui.js';
import * as fmt from '../format.js';

export default function dlqTopicsPage() {
  let list;
  return {
    title: 'Dead letters',
    mount(root) {
      list = ui.card('Topics with dead letters');
      root.append(ui.header('Dead letters', [], 'Messages that failed all their retries or were dead-lettered by a handler.'), list);
    },
    load: (signal) => api.get('dlq', signal),
    update(data) {
      const rows = data.topics.map((t) => [
        h('a', { href: route('topics', t.topic, 'dlq'), class: 'strong name', title: t.topic, text: t.topic }),
        { text: fmt.int(t.size), class: 'num' },
      ]);
      fill(list.body, ui.table([{ label: 'Topic' }, { label: 'Dead letters', class: 'num' }], rows, 'No dead letters anywhere.'));
    },
  };
}
