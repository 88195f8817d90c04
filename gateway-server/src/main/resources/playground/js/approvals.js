// Approvals: one card per pending approval wherever it can be answered (the chat, any mirror
// column), kept in step through the ApprovalBook; and the A2H panel, which lists what the gateway
// waits for as an A2H agent sees it and answers it over REST.

import { Emitter } from './emitter.js';
import { clear, h, announce } from './dom.js';

/** What the page knows of each approval: what it asks, and how it was decided. */
export class ApprovalBook extends Emitter {
  approvals = new Map();

  see(view) {
    const known = this.approvals.get(view.approvalId) ?? { status: 'pending' };
    // Dialects tell different parts (AgentScope has no reasoning or risk): keep what any told.
    const merged = { ...known };
    for (const k of ['approvalId', 'tool', 'description', 'args', 'reasoning', 'risk']) {
      if (view[k] !== undefined && view[k] !== null) merged[k] = view[k];
    }
    this.approvals.set(view.approvalId, merged);
    this.emit('change', merged);
    return merged;
  }

  decided(approvalId, approved, feedback, via) {
    const a = this.approvals.get(approvalId) ?? { approvalId };
    Object.assign(a, { status: 'decided', approved, feedback, via });
    this.approvals.set(approvalId, a);
    this.emit('change', a);
  }

  /** The gateway refused a decision sent from the page (decided first elsewhere, say). */
  refused(approvalId, message) {
    const a = this.approvals.get(approvalId);
    if (!a) return;
    Object.assign(a, { status: 'refused', problem: message });
    this.emit('change', a);
  }

  /** An approval the gateway no longer waits for, decided by someone outside this page. */
  decidedElsewhere(approvalId) {
    const a = this.approvals.get(approvalId);
    if (!a || a.status !== 'pending') return;
    a.status = 'elsewhere';
    this.emit('change', a);
  }

  get(approvalId) {
    return this.approvals.get(approvalId);
  }
}

/**
 * A card for one approval. `client` answers it (null: only shown); the card follows the book, so
 * a decision taken in another column or over A2H shows here too.
 */
export function approvalCard(book, approvalId, client) {
  const card = h('div', { class: 'approval-card', 'data-approval-id': approvalId, role: 'group', 'aria-label': 'Approval request' });
  const render = () => {
    const a = book.get(approvalId) ?? { approvalId };
    clear(card);
    card.classList.toggle('decided', a.status === 'decided');
    card.append(h('div', { class: 'title' },
      h('span', {}, 'Approval needed: '), h('code', {}, a.tool ?? '?'),
      a.risk ? h('span', { class: `risk ${a.risk}` }, `risk ${a.risk}`) : null));
    const details = h('dl', {});
    if (a.description) details.append(h('dt', {}, 'what'), h('dd', {}, a.description));
    if (a.args !== undefined) details.append(h('dt', {}, 'arguments'), h('dd', {}, h('code', {}, JSON.stringify(a.args))));
    if (a.reasoning) details.append(h('dt', {}, 'reasoning'), h('dd', {}, a.reasoning));
    details.append(h('dt', {}, 'id'), h('dd', {}, h('code', {}, approvalId)));
    card.append(details);
    if (a.status === 'elsewhere') {
      card.append(h('p', { class: 'outcome', role: 'status' }, 'Decided elsewhere: the gateway no longer waits for it.'));
      return;
    }
    if (a.status === 'refused') {
      card.append(h('p', { class: 'problem', role: 'status' }, `The gateway refused the decision: ${a.problem}`));
      return;
    }
    if (a.status === 'decided') {
      card.append(h('p', { class: `outcome ${a.approved ? 'approved' : 'rejected'}`, role: 'status' },
        `${a.approved ? 'Approved' : 'Rejected'} from ${a.via}${a.feedback ? ` — “${a.feedback}”` : ''}`));
      return;
    }
    if (!client || !client.answersApprovals) {
      card.append(h('p', { class: 'hint' }, `${client ? client.constructor.label : 'This view'} cannot answer approvals; answer it from another column or the A2H panel.`));
      return;
    }
    const feedbackId = `fb-${approvalId}-${client.constructor.key}-${Math.random().toString(36).slice(2, 7)}`;
    const feedback = h('input', { id: feedbackId, placeholder: 'feedback (optional)', maxlength: 10000 });
    const decide = (approved) => {
      if (client.decide({ approvalId }, approved, feedback.value.trim())) {
        client.lastDecision = { approvalId, at: Date.now() };
        book.decided(approvalId, approved, feedback.value.trim(), client.constructor.label);
        announce(`${approved ? 'Approved' : 'Rejected'} ${a.tool ?? ''} from ${client.constructor.label}`);
      }
    };
    card.append(h('div', { class: 'actions' },
      h('label', { for: feedbackId, class: 'visually-hidden' }, 'Feedback'), feedback,
      h('button', { type: 'button', class: 'button ok small', 'data-action': 'approve', onclick: () => decide(true) }, 'Approve'),
      h('button', { type: 'button', class: 'button danger small', 'data-action': 'reject', onclick: () => decide(false) }, 'Reject')));
  };
  render();
  const off = book.on('change', (a) => {
    if (a.approvalId !== approvalId) return;
    if (!card.isConnected && card.dataset.mounted) {
      off();
      return;
    }
    render();
  });
  queueMicrotask(() => { card.dataset.mounted = '1'; });
  return card;
}

const KEY_STORAGE = 'switchboard.a2hKey';
const POLL_MS = 2000;

/** The A2H panel: what waits for a person in every conversation, answered over REST. */
export function mountA2h(book) {
  const list = document.getElementById('a2h-list');
  const status = document.getElementById('a2h-status');
  const keyInput = document.getElementById('a2h-key');
  keyInput.value = sessionStorage.getItem(KEY_STORAGE) ?? '';
  const headers = () => {
    const key = sessionStorage.getItem(KEY_STORAGE);
    return key ? { Authorization: `Bearer ${key}` } : {};
  };
  let shown = '';
  /** The call ids the last poll listed: one gone from the list was decided. */
  let waiting = new Set();

  const item = (call) => {
    const s = call.spec ?? {};
    const state = s.state ?? {};
    const conversation = s.channel?.session?.session_id;
    const id = `a2h-${call.call_id}`;
    const comment = h('input', { id, placeholder: 'comment (optional)' });
    const respond = async (approved) => {
      const res = await fetch(`/a2h/v1/agent/function_calls/${encodeURIComponent(call.call_id)}/respond`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers() },
        body: JSON.stringify({ approved, comment: comment.value.trim() || undefined }),
      });
      if (res.ok) {
        book.decided(call.call_id, approved, comment.value.trim(), 'A2H');
        announce(`${approved ? 'Approved' : 'Rejected'} over A2H`);
      } else {
        const body = await res.json().catch(() => ({}));
        status.textContent = `respond: HTTP ${res.status} ${body.error?.code ?? ''} ${body.error?.message ?? ''}`;
      }
      poll();
    };
    return h('li', { class: 'approval-card', 'data-call-id': call.call_id },
      h('div', { class: 'title' }, h('code', {}, s.fn ?? '?'),
        state.risk_level ? h('span', { class: `risk ${state.risk_level}` }, `risk ${state.risk_level}`) : null),
      h('dl', {},
        conversation ? [h('dt', {}, 'conversation'), h('dd', {}, h('code', {}, conversation))] : null,
        state.description ? [h('dt', {}, 'what'), h('dd', {}, state.description)] : null,
        h('dt', {}, 'arguments'), h('dd', {}, h('code', {}, JSON.stringify(s.kwargs ?? {}))),
        state.reasoning ? [h('dt', {}, 'reasoning'), h('dd', {}, state.reasoning)] : null,
        h('dt', {}, 'call'), h('dd', {}, h('code', {}, call.call_id))),
      h('div', { class: 'actions' },
        h('label', { for: id, class: 'visually-hidden' }, 'Comment'), comment,
        h('button', { type: 'button', class: 'button ok small', onclick: () => respond(true) }, 'Approve'),
        h('button', { type: 'button', class: 'button danger small', onclick: () => respond(false) }, 'Reject')));
  };

  async function poll() {
    let res;
    try {
      res = await fetch('/a2h/v1/agent/function_calls/pending?limit=50', { headers: headers() });
    } catch (e) {
      status.textContent = `cannot reach the gateway: ${e.message}`;
      return;
    }
    if (res.status === 401) {
      status.textContent = 'The gateway asks A2H callers for a key (--a2h-api-key): enter one above.';
      return;
    }
    if (res.status === 403) {
      status.textContent = 'No A2H key is configured, so only loopback callers are served, and this browser is not on the gateway\'s machine.';
      return;
    }
    if (res.status === 404) {
      status.textContent = 'This gateway has no A2H module.';
      return;
    }
    const body = await res.json();
    const items = body.items ?? [];
    const now = new Set(items.map((c) => c.call_id));
    for (const id of waiting) if (!now.has(id)) book.decidedElsewhere(id);
    waiting = now;
    const fingerprint = items.map((c) => c.call_id).join(',');
    status.textContent = items.length === 0 ? 'Nothing is waiting for a person.' : `${body.total} waiting, oldest first.`;
    if (fingerprint === shown && list.children.length === items.length) return;
    // Keep a card being typed into.
    if (list.contains(document.activeElement) && fingerprint.startsWith(shown)) return;
    shown = fingerprint;
    clear(list).append(...items.map(item));
  }

  document.getElementById('a2h-key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const key = keyInput.value.trim();
    if (key) sessionStorage.setItem(KEY_STORAGE, key);
    else sessionStorage.removeItem(KEY_STORAGE);
    shown = '';
    poll();
  });
  document.getElementById('a2h-refresh').addEventListener('click', () => {
    shown = '';
    poll();
  });
  book.on('change', () => setTimeout(poll, 300));
  setInterval(() => {
    if (document.visibilityState === 'visible') poll();
  }, POLL_MS);
  poll();
}
