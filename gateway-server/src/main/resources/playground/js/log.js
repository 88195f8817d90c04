// The raw frame log: every frame in and out of every connection, filterable, expandable,
// copied or exported as JSON (a transcript a test can hold the gateway to).

import { Emitter } from './emitter.js';
import { clear, clock, h, pretty, size, announce } from './dom.js';

/** Every frame the page's connections sent or received, in order. */
export class FrameStore extends Emitter {
  frames = [];

  add(frame) {
    this.frames.push(frame);
    this.emit('add', frame);
  }

  clear() {
    this.frames = [];
    this.emit('clear');
  }
}

const MAX_ROWS = 3000;

/** A frame as the export writes it. */
function exported(f) {
  return {
    n: f.n,
    time: new Date(f.t).toISOString(),
    dialect: f.dialect,
    connection: f.purpose === 'check' ? `${f.conn} (resume-lab replay)` : f.conn,
    direction: f.dir,
    type: f.type,
    seq: f.seq,
    size: f.size,
    frame: f.json ?? f.text,
    ...(f.note ? { note: f.note } : {}),
  };
}

export function mountLog(store, app) {
  const list = document.getElementById('log-list');
  const text = document.getElementById('log-text');
  const type = document.getElementById('log-type');
  const dialect = document.getElementById('log-dialect');
  const checks = document.getElementById('log-checks');
  const count = document.getElementById('log-count');
  const types = new Set();
  const dialects = new Set();

  const matches = (f) => {
    if (f.purpose === 'check' && !checks.checked) return false;
    if (type.value && f.type !== type.value) return false;
    if (dialect.value && f.dialect !== dialect.value) return false;
    const q = text.value.trim().toLowerCase();
    return !q || f.text.toLowerCase().includes(q) || f.type.toLowerCase().includes(q) || String(f.seq) === q;
  };
  const shown = () => store.frames.filter(matches);

  const row = (f) => h('li', { 'data-dialect': f.dialect, 'data-seq': f.seq ?? '', 'data-dir': f.dir },
    h('details', {},
      h('summary', {},
        h('span', { class: 't', title: new Date(f.t).toISOString() }, clock(f.t)),
        h('span', { class: 'conn' }, f.conn + (f.purpose === 'check' ? ' (replay)' : '')),
        h('span', { class: 'dir', 'aria-label': f.dir === 'in' ? 'received' : 'sent' }, f.dir === 'in' ? '←' : '→'),
        h('span', { class: 'type mono' }, f.type),
        h('span', { class: 'seq', title: 'seq' }, f.seq ?? ''),
        h('span', { class: 'sz' }, size(f.size)),
        h('span', { class: 'preview' }, f.note || f.text.slice(0, 160))),
      h('pre', {}, pretty(f.json, f.text))));

  const updateCount = (n) => {
    count.textContent = `${store.frames.length} frames${n !== store.frames.length ? `, ${n} shown` : ''}`;
  };
  const render = () => {
    clear(list);
    const rows = shown();
    for (const f of rows.slice(-MAX_ROWS)) list.append(row(f));
    updateCount(rows.length);
  };
  const addOption = (select, set, value) => {
    if (set.has(value)) return;
    set.add(value);
    const options = [...set].sort();
    const keep = select.value;
    clear(select).append(h('option', { value: '' }, select === type ? 'all types' : 'all dialects'),
      ...options.map((o) => h('option', { value: o }, o)));
    select.value = keep;
  };

  store.on('add', (f) => {
    addOption(type, types, f.type);
    addOption(dialect, dialects, f.dialect);
    if (matches(f)) {
      const stick = list.scrollTop + list.clientHeight >= list.scrollHeight - 30;
      list.append(row(f));
      if (list.children.length > MAX_ROWS) list.firstChild.remove();
      if (stick) list.scrollTop = list.scrollHeight;
    }
    updateCount(shown().length);
  });
  store.on('clear', render);
  for (const el of [text, type, dialect, checks]) el.addEventListener('input', render);

  const transcript = () => JSON.stringify({
    format: 'switchboard-playground-transcript/1',
    exportedAt: new Date().toISOString(),
    gateway: location.origin,
    conversationId: app.conversationId,
    filter: { text: text.value, type: type.value, dialect: dialect.value, replays: checks.checked },
    frames: shown().map(exported),
  }, null, 2);

  document.getElementById('log-copy').addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(transcript());
      announce('The frames shown were copied as JSON');
    } catch (e) {
      announce(`Copying failed: ${e.message}`);
    }
  });
  document.getElementById('log-export').addEventListener('click', () => {
    const blob = new Blob([transcript()], { type: 'application/json' });
    const a = h('a', { href: URL.createObjectURL(blob), download: `switchboard-${app.conversationId}.json` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  });
  document.getElementById('log-clear').addEventListener('click', () => store.clear());
  render();
}
