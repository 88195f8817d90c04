// The resume lab: cut a connection on purpose, resume it from its cursor, and check that every
// seq of the run arrived once and in order, against a fresh replay of the same run in the same
// dialect (a new connection from the seq before the run's first).

import { clear, h, announce } from './dom.js';
import { WsDialectClient } from './dialects/client.js';

const QUIET_MS = 2500;
const REPLAY_TIMEOUT_MS = 5000;

export class ResumeLab {
  constructor(app) {
    this.app = app;
    this.select = document.getElementById('lab-connection');
    this.results = document.getElementById('lab-results');
    this.experiments = [];
    document.getElementById('lab-cut').addEventListener('click', () => this.cut(this.selected()));
    document.getElementById('lab-resume').addEventListener('click', () => this.resume(this.selected()));
  }

  selected() {
    return this.app.clients.get(this.select.value);
  }

  /** Lists the open columns. */
  refresh(clients) {
    const keep = this.select.value;
    clear(this.select).append(...clients.map((c) => h('option', { value: c.constructor.key }, c.constructor.label)));
    if (clients.some((c) => c.constructor.key === keep)) this.select.value = keep;
  }

  reset() {
    this.experiments = [];
    clear(this.results);
  }

  cut(client) {
    if (!client) return;
    if (!client.ws && !client.streaming) {
      this.note(client, `${client.constructor.label} has nothing to cut: it is ${client.state}.`);
      return;
    }
    client.cut();
    const exp = {
      client,
      cutAt: client.cursor,
      base: client.inRun && client.runFirstSeq !== null ? client.runFirstSeq - 1 : client.cursor ?? 0,
      seqsAtCut: client.seqs.length,
      li: h('li', { 'data-verdict': 'waiting', 'data-dialect': client.constructor.key }),
    };
    this.experiments.push(exp);
    this.results.prepend(exp.li);
    this.render(exp, `Cut ${client.constructor.label} after seq ${exp.cutAt ?? 'none'}${client.inRun ? ', mid-run' : ''}. Resume it when you like: the run goes on without it.`);
    announce(`${client.constructor.label} cut`);
  }

  resume(client) {
    if (!client) return;
    const exp = [...this.experiments].reverse().find((e) => e.client === client && !e.resumed);
    if (!exp) {
      client.resume();
      return;
    }
    exp.resumed = true;
    const cursor = client.cursor ?? 0;
    this.render(exp, `Resumed ${client.constructor.label} with cursor ${cursor} (${client instanceof WsDialectClient ? `last_seq=${cursor}` : `Last-Event-ID: ${cursor}`}); waiting for the run to end…`);
    let quiet = null;
    const done = () => {
      offView();
      offFrame();
      clearTimeout(quiet);
      if (!exp.checked) {
        exp.checked = true;
        this.verify(exp);
      }
    };
    const offView = client.on('view', (v) => {
      if (v.kind === 'run-end') setTimeout(done, 100);
    });
    const offFrame = client.on('frame', (f) => {
      if (f.seq !== null && exp.firstAfter === undefined && f.dir === 'in') exp.firstAfter = f.seq;
      clearTimeout(quiet);
      quiet = setTimeout(() => {
        if (!client.streaming) done();
      }, QUIET_MS);
    });
    quiet = setTimeout(() => {
      if (!client.streaming) done();
    }, QUIET_MS);
    client.resume();
  }

  /** Replays the run in a fresh connection of the same dialect and compares the seqs. */
  async verify(exp) {
    const { client } = exp;
    const target = client.cursor ?? 0;
    const Dialect = client.constructor;
    const ref = new Dialect({ ...client.ctx, purpose: 'check' });
    const seen = [];
    ref.on('frame', (f) => {
      if (f.dir === 'in' && f.seq !== null) seen.push(f.seq);
    });
    this.render(exp, `Checking ${client.constructor.label} against a fresh replay from seq ${exp.base}…`);
    if (ref instanceof WsDialectClient) {
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, REPLAY_TIMEOUT_MS);
        ref.on('frame', (f) => {
          if (f.seq !== null && f.seq >= target) {
            clearTimeout(timer);
            resolve();
          }
        });
        ref.open({ lastSeq: exp.base });
      });
      ref.close();
    } else {
      ref.cursor = exp.base;
      await ref.follow();
      ref.close();
    }
    const inRange = (s) => s > exp.base && s <= target;
    const expected = [...new Set(seen.filter(inRange))];
    const got = client.seqs.filter(inRange);
    const gotSet = new Set(got);
    const missing = expected.filter((s) => !gotSet.has(s));
    const counts = new Map();
    for (const s of got) counts.set(s, (counts.get(s) ?? 0) + 1);
    const doubled = [...counts].filter(([, n]) => n > 1).map(([s]) => s);
    const extra = [...gotSet].filter((s) => !expected.includes(s));
    const inOrder = got.every((s, i) => i === 0 || s > got[i - 1]);
    const before = got.filter((s) => s <= (exp.cutAt ?? 0)).length;
    const after = got.length - before;
    const ok = missing.length === 0 && doubled.length === 0 && extra.length === 0 && inOrder && expected.length > 0;
    exp.li.dataset.verdict = ok ? 'ok' : 'bad';
    const span = expected.length ? `seq ${expected[0]}–${expected.at(-1)}` : 'no seq';
    const facts = `cut after seq ${exp.cutAt ?? 'none'}, resumed from it; ${before} frames with a seq before the cut, ${after} after`
      + `${exp.firstAfter !== undefined ? ` (the first: ${exp.firstAfter})` : ''}; ${span} of the run checked against a fresh replay (${expected.length} frames)`;
    const verdict = ok ? 'No gap: nothing missed, nothing doubled, in order.'
      : [missing.length ? `missed ${missing.join(', ')}` : '', doubled.length ? `doubled ${doubled.join(', ')}` : '',
        extra.length ? `not in the replay ${extra.join(', ')}` : '', inOrder ? '' : 'out of order',
        expected.length ? '' : 'the replay showed nothing'].filter(Boolean).join('; ');
    clear(exp.li).append(h('span', { class: 'verdict' }, ok ? '✓ ' : '✗ ', verdict), ' ', h('span', { class: 'facts' }, `${client.constructor.label}: ${facts}.`));
    exp.li.dataset.missing = String(missing.length);
    exp.li.dataset.doubled = String(doubled.length);
    announce(ok ? `${client.constructor.label}: no gap after the resume` : `${client.constructor.label}: ${verdict}`);
  }

  render(exp, text) {
    clear(exp.li).append(h('span', { class: 'verdict' }, '… '), text);
  }

  note(client, text) {
    this.results.prepend(h('li', { 'data-verdict': 'waiting' }, text));
  }
}
