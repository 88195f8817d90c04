// The dialect mirror: one column per open connection, one row per seq. A frame that carries a
// seq closes its row's cell; frames without one (the first frames of an event that becomes
// several, a reattach's preamble, what the page sent) wait in the column and join the next cell,
// since a dialect's cursor always means "every frame up to here".

import { approvalCard } from './approvals.js';
import { clear, h } from './dom.js';

/** Which dialect names a row's core event when several could. */
const LABEL_RANK = ['agui-ws', 'agui-sse', 'hai', 'agentscope', 'voiceassist'];

/** A few words of what a frame says: its text, data or name, for its one-line summary. */
function preview(f) {
  const j = f.json;
  if (!j || typeof j !== 'object') return f.note || f.text;
  const quote = (t) => JSON.stringify(t);
  if (typeof j.delta === 'string') return quote(j.delta);
  if (typeof j.text === 'string') return quote(j.text);
  if (typeof j.content === 'string') return quote(j.content);
  if (j.data && typeof j.data === 'object') return JSON.stringify(j.data);
  if (Array.isArray(j.content)) {
    const part = j.content.find((c) => c.data || typeof c.text === 'string');
    if (part) return part.data ? JSON.stringify(part.data) : quote(part.text);
  }
  if (Array.isArray(j.messages)) return quote(j.messages.at(-1)?.content ?? '');
  if (Array.isArray(j.resume)) return JSON.stringify(j.resume[0]?.payload ?? {});
  if (j.type === 'CUSTOM') return j.value?.toolName ? quote(j.value.toolName) : JSON.stringify(j.value ?? null);
  const pick = j.stepName ?? j.toolCallName ?? j.tool_name ?? j.value?.toolName ?? j.value?.message ?? j.result
    ?? j.message ?? j.error?.message ?? j.input ?? j.status ?? j.name;
  if (typeof pick === 'string') return quote(pick);
  return pick !== undefined && pick !== null ? JSON.stringify(pick).slice(0, 120) : '';
}

export class Mirror {
  constructor(book) {
    this.book = book;
    this.grid = document.getElementById('mirror-grid');
    this.clients = [];
  }

  /** Shows these clients' columns, from what each has seen so far. */
  rebuild(clients) {
    this.clients = clients;
    this.rows = new Map();
    this.pending = new Map(clients.map((c) => [c.constructor.key, []]));
    this.heads = new Map();
    this.chips = new WeakMap();
    clear(this.grid);
    this.table = h('div', { class: 'mirror-table', role: 'table', 'aria-label': 'Frames of each dialect by seq' });
    this.table.style.setProperty('--cols', `5.6rem repeat(${clients.length}, minmax(0, 1fr))`);
    this.table.style.minWidth = `calc(5.6rem + ${clients.length} * 15rem)`;
    const head = h('div', { class: 'mirror-row head', role: 'row' }, h('div', { class: 'seq-cell', role: 'columnheader' }, 'seq', h('span', { class: 'core' }, 'core event')));
    for (const c of clients) {
      const el = this.columnHead(c);
      this.heads.set(c.constructor.key, el);
      head.append(el);
    }
    this.pendingRow = h('div', { class: 'mirror-row pending', role: 'row', hidden: true },
      h('div', { class: 'seq-cell', role: 'rowheader', title: 'frames not yet followed by a frame with a seq' }, '…', h('span', { class: 'core' }, 'no seq yet')),
      clients.map((c) => h('div', { class: 'cell', role: 'cell', 'data-dialect': c.constructor.key })));
    this.table.append(head, this.pendingRow);
    this.grid.append(this.table);
    for (const c of clients) {
      for (const entry of c.history) {
        this.frame(c, entry.frame);
        for (const v of entry.views) this.view(c, v);
      }
      this.refreshHead(c);
    }
  }

  columnHead(c) {
    const key = c.constructor.key;
    const state = h('span', { class: 'state' });
    const continuity = h('span', { class: 'continuity' });
    const cut = h('button', { type: 'button', class: 'button danger small', 'data-action': 'cut', onclick: () => this.onCut?.(c) }, 'Cut');
    const resume = h('button', { type: 'button', class: 'button small', 'data-action': 'resume', onclick: () => this.onResume?.(c) }, 'Resume');
    const el = h('div', { class: 'col-head', role: 'columnheader', 'data-dialect': key, 'data-column': key },
      h('div', { class: 'name' }, h('span', { class: 'dot', 'aria-hidden': 'true' }), c.constructor.label),
      h('div', { class: 'transport' }, c.constructor.transport),
      h('div', { class: 'row' }, state, cut, resume),
      continuity);
    el.parts = { state, continuity, cut, resume };
    return el;
  }

  /** Updates a column's state, buttons and seq check. */
  refreshHead(c) {
    const el = this.heads?.get(c.constructor.key);
    if (!el) return;
    const { state, continuity, cut, resume } = el.parts;
    state.className = `state ${c.state}`;
    state.textContent = c.state;
    state.title = c.stateDetail ?? '';
    cut.disabled = !(c.ws || c.streaming);
    resume.disabled = c.state !== 'cut' && c.state !== 'closed' && c.state !== 'failed';
    const seqs = c.seqs;
    let problem = null;
    for (let i = 1; i < seqs.length; i++) {
      if (seqs[i] <= seqs[i - 1]) {
        problem = `seq ${seqs[i]} came after ${seqs[i - 1]}`;
        break;
      }
    }
    continuity.className = `continuity ${problem ? 'bad' : ''}`;
    continuity.dataset.ok = problem ? 'false' : 'true';
    continuity.textContent = seqs.length === 0 ? 'no event yet'
      : problem ? `⚠ ${problem}` : `seq ${seqs[0]}–${seqs.at(-1)}, ${seqs.length} with a seq, in order`;
  }

  row(seq) {
    let row = this.rows.get(seq);
    if (row) return row;
    const label = h('span', { class: 'core' });
    const el = h('div', { class: 'mirror-row', role: 'row', 'data-seq': seq },
      h('div', { class: 'seq-cell', role: 'rowheader' }, String(seq), label),
      this.clients.map((c) => h('div', { class: 'cell empty', role: 'cell', 'data-dialect': c.constructor.key })));
    row = { seq, el, label, rank: Infinity };
    this.rows.set(seq, row);
    let before = this.pendingRow;
    for (const other of this.rows.values()) {
      if (other.seq > seq && (before === this.pendingRow || other.seq < Number(before.dataset.seq))) before = other.el;
    }
    this.table.insertBefore(el, before);
    return row;
  }

  /**
   * Adds rows for the seqs between the last row and this one: events none of these dialects has a
   * frame for (an approval's decision, say), shown as such rather than left out.
   */
  fillGap(seq) {
    if (this.rows.has(seq) || this.rows.size === 0) return;
    const last = Math.max(...this.rows.keys());
    if (seq <= last + 1 || seq - last > 50) return;
    for (let s = last + 1; s < seq; s++) {
      const row = this.row(s);
      row.el.classList.add('gap');
      row.label.textContent = 'no frame here';
    }
  }

  cell(row, key) {
    const i = this.clients.findIndex((c) => c.constructor.key === key);
    return row.el.children[i + 1];
  }

  chip(f) {
    const pre = h('pre', {});
    const d = h('details', { class: `frame ${f.dir}`, 'data-dialect': f.dialect, 'data-seq': f.seq ?? '', 'data-type': f.type, 'data-dir': f.dir },
      h('summary', { title: f.note || f.type },
        h('span', { class: 'dir', 'aria-label': f.dir === 'in' ? 'received' : 'sent' }, f.dir === 'in' ? '←' : '→'),
        h('span', { class: 'type' }, f.type),
        h('span', { class: 'preview' }, preview(f))),
      pre);
    d.addEventListener('toggle', () => {
      if (d.open && !pre.textContent) pre.textContent = f.json ? JSON.stringify(f.json, null, 2) : f.text;
    });
    const wrap = h('div', { class: 'frame-wrap' }, d);
    this.chips.set(f, wrap);
    return wrap;
  }

  /** Places one frame of a column. */
  frame(c, f) {
    if (f.purpose !== 'live' || !this.table) return;
    const key = c.constructor.key;
    const pending = this.pending.get(key);
    if (!pending) return;
    const chip = this.chip(f);
    if (f.seq === null) {
      pending.push(chip);
      this.cell({ el: this.pendingRow }, key).append(chip);
      this.pendingRow.hidden = false;
      return;
    }
    this.fillGap(f.seq);
    const row = this.row(f.seq);
    row.el.classList.remove('gap');
    const cell = this.cell(row, key);
    cell.classList.remove('empty');
    cell.append(...pending.splice(0), chip);
    this.pendingRow.hidden = [...this.pending.values()].every((p) => p.length === 0);
    const core = f.json ? c.coreEventOf(f.json) : null;
    const rank = LABEL_RANK.indexOf(key);
    if (core && rank < row.rank) {
      row.rank = rank;
      row.label.textContent = core;
    }
  }

  /** Puts an approval card under the frame that asked for it, answerable from this column. */
  view(c, v) {
    if (v.kind !== 'approval' || !v.frame) return;
    const chip = this.chips.get(v.frame);
    if (!chip) return;
    this.book.see(v);
    chip.append(approvalCard(this.book, v.approvalId, c));
  }
}
