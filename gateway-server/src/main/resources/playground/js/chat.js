// The chat: one dialect's view of the conversation, in the small common shape every dialect
// client translates its frames to (run-start, step, text, text-end, reasoning, tool, approval,
// error, run-end).

import { approvalCard } from './approvals.js';
import { announce, clear, h } from './dom.js';
import { explainError } from './errors.js';

export class ChatView {
  constructor(book) {
    this.book = book;
    this.el = document.getElementById('transcript');
    this.reset();
  }

  reset() {
    clear(this.el);
    this.messages = new Map();
    this.tools = new Map();
    this.reasoning = new Map();
    this.approvals = new Set();
    this.el.append(h('p', { class: 'hint' }, 'Messages, steps, tool calls, approvals and errors of the conversation appear here, as the chosen dialect tells them.'));
  }

  /** Follows this client (the dialect the person talks in). */
  attach(client) {
    this.detach?.();
    this.client = client;
    const offView = client.on('view', (v) => this.show(v));
    const offState = client.on('state', ({ state, detail }) => {
      if (state === 'failed') this.add(h('div', { class: 'error-box', role: 'alert' }, `${client.constructor.label}: ${detail}`));
    });
    this.detach = () => {
      offView();
      offState();
    };
    this.add(h('div', { class: 'divider' }, `talking in ${client.constructor.label} (${client.constructor.transport})`));
  }

  user(text) {
    this.add(h('div', { class: 'bubble user' }, text));
  }

  add(el) {
    const stick = this.el.scrollTop + this.el.clientHeight >= this.el.scrollHeight - 40;
    this.el.append(el);
    if (stick) this.el.scrollTop = this.el.scrollHeight;
    return el;
  }

  show(v) {
    switch (v.kind) {
      case 'run-start':
        this.add(h('div', { class: 'divider' }, 'run started'));
        break;
      case 'step':
        this.add(h('div', { class: 'chip' }, `⋯ ${v.name.replaceAll('_', ' ')}`));
        break;
      case 'text': {
        let bubble = this.messages.get(v.messageId);
        if (!bubble) {
          bubble = this.add(h('div', { class: 'bubble assistant streaming', 'data-message-id': v.messageId }, h('span', { class: 'text' })));
          this.messages.set(v.messageId, bubble);
        }
        bubble.firstChild.append(v.delta);
        const stick = this.el.scrollTop + this.el.clientHeight >= this.el.scrollHeight - 80;
        if (stick) this.el.scrollTop = this.el.scrollHeight;
        break;
      }
      case 'text-end': {
        const bubble = this.messages.get(v.messageId);
        if (!bubble) break;
        bubble.classList.remove('streaming');
        bubble.dataset.complete = 'true';
        if (v.citations?.length) {
          bubble.append(h('ol', { class: 'citations', 'aria-label': 'Sources' },
            v.citations.map((c) => h('li', {}, c.title ?? c.id, c.page ? `, p. ${c.page}` : ''))));
        }
        announce(`Answer: ${bubble.firstChild?.textContent ?? ''}`);
        break;
      }
      case 'reasoning': {
        let box = this.reasoning.get(v.messageId);
        if (!box) {
          const text = h('p', { class: 'mono' });
          box = this.add(h('details', { class: 'reasoning' }, h('summary', {}, 'Reasoning'), text));
          box.text = text;
          this.reasoning.set(v.messageId, box);
        }
        box.text.append(v.delta);
        break;
      }
      case 'tool': {
        let card = this.tools.get(v.toolCallId);
        if (!card) {
          card = this.add(h('div', { class: 'tool-card', 'data-tool-call-id': v.toolCallId }));
          card.known = {};
          this.tools.set(v.toolCallId, card);
        }
        // A result may not repeat the call's name or arguments (AgentScope's does not): keep them.
        for (const [k, value] of Object.entries(v)) if (value !== undefined && value !== null) card.known[k] = value;
        v = card.known;
        clear(card);
        card.className = `tool-card ${v.status}`;
        card.append(h('span', { class: 'status' }, v.status === 'started' ? 'running' : v.status),
          h('div', {}, 'tool ', h('code', {}, v.name ?? '?')),
          v.args !== undefined ? h('div', {}, h('code', {}, JSON.stringify(v.args))) : null,
          v.result !== undefined ? h('div', {}, v.status === 'failed' ? '✗ ' : '→ ', v.result) : null);
        break;
      }
      case 'approval': {
        this.book.see(v);
        if (this.approvals.has(v.approvalId)) break;
        this.approvals.add(v.approvalId);
        this.add(approvalCard(this.book, v.approvalId, this.client));
        break;
      }
      case 'error':
        this.add(h('div', { class: 'error-box', role: 'alert' },
          h('strong', {}, v.code ?? 'error'), ': ', v.message ?? '',
          h('div', { class: 'hint' }, explainError(v.code, v.status))));
        break;
      case 'run-end':
        this.add(h('div', { class: `divider ${v.ok ? '' : 'failed'}`, 'data-run-end': v.ok ? (v.interrupted ? 'waiting' : 'ok') : 'failed' },
          v.ok ? (v.interrupted ? 'run paused: waiting for a decision' : 'run finished') : 'run failed'));
        break;
      default:
        break;
    }
  }
}
