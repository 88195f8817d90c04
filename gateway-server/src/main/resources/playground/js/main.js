// The playground: wires the dialect clients to the chat, the mirror, the approvals, the resume
// lab and the log. The URL's fragment names the conversation and the columns
// (#conversation=<id>&chat=hai&mirror=hai,agui-ws,agentscope), so a view can be shared.

import { DIALECTS, dialectByKey } from './dialects/index.js';
import { ApprovalBook, mountA2h } from './approvals.js';
import { Auth, mountAuth } from './auth.js';
import { ChatView } from './chat.js';
import { FrameStore, mountLog } from './log.js';
import { Mirror } from './mirror.js';
import { ResumeLab } from './resume.js';
import { h, randomId } from './dom.js';

const EXAMPLES = [
  { label: 'Ask a question', text: 'What are the rules for food storage?' },
  { label: 'search', text: 'Search the rules on allergens' },
  { label: 'report (approval)', text: 'Please generate the inspection report' },
  { label: 'broken tool', text: 'Check EST-404 with the broken tool' },
  { label: 'crash', text: 'Make it crash' },
  { label: 'history', text: 'history' },
  { label: 'slow', text: 'Answer slowly please' },
];

/** The codes a refused decision comes back with, in any dialect. */
const DECISION_ERRORS = new Set(['already_decided', 'not_found', 'validation_error', 'forbidden', 'invalid_session']);

const info = await fetch('/playground/info.json').then((r) => r.json()).catch(() => ({ auth: false, runtime: '?' }));
const fragment = new URLSearchParams(location.hash.slice(1));
const frames = new FrameStore();
const book = new ApprovalBook();
const auth = new Auth(info.auth);
const app = {
  conversationId: fragment.get('conversation') || `pg-${randomId(5)}`,
  chatKey: dialectByKey(fragment.get('chat'))?.key ?? 'hai',
  columns: (fragment.get('mirror') ?? 'hai,agui-ws,agentscope').split(',').filter((k) => dialectByKey(k)),
  clients: new Map(),
};
const chat = new ChatView(book);
const mirror = new Mirror(book);
const lab = new ResumeLab(app);
const authUi = mountAuth(auth);
mountLog(frames, app);
mountA2h(book);

document.getElementById('gateway-info').textContent =
  `runtime ${info.runtime} · authentication ${info.auth ? 'on' : 'off'} · version ${info.version ?? '?'}`;

function saveFragment() {
  const f = new URLSearchParams({ conversation: app.conversationId, chat: app.chatKey, mirror: app.columns.join(',') });
  history.replaceState(null, '', `#${f}`);
}

/** The client of a dialect in the current conversation, made and wired on first use. */
function client(key) {
  let c = app.clients.get(key);
  if (c) return c;
  const Dialect = dialectByKey(key);
  c = new Dialect({ conversationId: app.conversationId, auth, frames, purpose: 'live' });
  c.history = [];
  c.on('frame', (f) => {
    c.history.push({ frame: f, views: [] });
    mirror.frame(c, f);
    mirror.refreshHead(c);
    if (f.dir === 'in' && f.seq !== null) {
      for (const other of app.clients.values()) if (other !== c) other.poke(f.seq);
    }
  });
  c.on('view', (v) => {
    if (v.frame) c.history.at(-1)?.views.push(v);
    if (v.kind === 'approval') book.see(v);
    // An error right after a decision this column sent is the gateway's answer to it.
    if (v.kind === 'error' && DECISION_ERRORS.has(v.code) && c.lastDecision && Date.now() - c.lastDecision.at < 5000) {
      book.refused(c.lastDecision.approvalId, `${v.code}: ${v.message}`);
      c.lastDecision = null;
    }
    mirror.view(c, v);
  });
  c.on('state', () => mirror.refreshHead(c));
  c.on('refused', () => authUi.explain());
  app.clients.set(key, c);
  return c;
}

/** Opens these columns (the chat's dialect always among them), closing the others. */
function setColumns(keys) {
  const wanted = DIALECTS.map((d) => d.key).filter((k) => keys.includes(k) || k === app.chatKey);
  for (const [key, c] of app.clients) {
    if (!wanted.includes(key)) {
      c.close();
      app.clients.delete(key);
    }
  }
  app.columns = wanted;
  const clients = wanted.map(client);
  mirror.rebuild(clients);
  for (const c of clients) if (c.state === 'closed' && authUi.ready()) c.open();
  lab.refresh(clients);
  renderToggles();
  saveFragment();
}

function setChat(key) {
  app.chatKey = key;
  setColumns([...app.columns, key]);
  chat.attach(client(key));
  document.getElementById('chat-dialect').value = key;
  saveFragment();
}

function openConversation(id) {
  for (const c of app.clients.values()) c.close();
  app.clients.clear();
  app.conversationId = id;
  document.getElementById('conversation-id').value = id;
  frames.clear();
  chat.reset();
  lab.reset();
  setChat(app.chatKey);
  if (info.auth && !authUi.ready()) {
    chat.add(h('p', { class: 'hint' }, 'Authentication is on: paste a token above, and the columns connect once the gateway accepts it.'));
  }
}

function renderToggles() {
  const box = document.getElementById('mirror-dialects');
  box.querySelectorAll('label').forEach((l) => l.remove());
  for (const D of DIALECTS) {
    const isChat = D.key === app.chatKey;
    const input = h('input', {
      type: 'checkbox', value: D.key, checked: app.columns.includes(D.key), disabled: isChat,
      onchange: (e) => setColumns(e.target.checked ? [...app.columns, D.key] : app.columns.filter((k) => k !== D.key)),
    });
    box.append(h('label', { class: 'dialect-toggle', 'data-dialect': D.key, title: isChat ? 'the chat talks in this dialect' : D.transport },
      input, h('span', { class: 'dot', 'aria-hidden': 'true' }), D.label));
  }
}

function send(text) {
  const c = client(app.chatKey);
  if (!text.trim()) return;
  chat.user(text);
  c.send(text);
}

// Chat controls
const dialectSelect = document.getElementById('chat-dialect');
dialectSelect.append(...DIALECTS.map((D) => h('option', { value: D.key }, `${D.label} — ${D.transport}`)));
dialectSelect.addEventListener('change', () => setChat(dialectSelect.value));
const input = document.getElementById('composer-input');
document.getElementById('composer').addEventListener('submit', (e) => {
  e.preventDefault();
  send(input.value);
  input.value = '';
});
input.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    document.getElementById('composer').requestSubmit();
  }
});
document.getElementById('hint-buttons').append(...EXAMPLES.map((x) => h('button', {
  type: 'button', 'data-example': x.label.split(' ')[0], title: x.text, onclick: () => send(x.text),
}, x.label)));
document.getElementById('hint-note').textContent = info.runtime === 'demo'
  ? 'Each sends a message that makes the demo agent show one flow: tools, an approval, a failing tool, a crash, the history, a slow stream.'
  : `This gateway runs the ${info.runtime} runtime: the examples are sent as they are, and its agent answers them its own way.`;

// Conversation controls
document.getElementById('conversation-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const id = document.getElementById('conversation-id').value.trim();
  if (id) openConversation(id);
});
document.getElementById('new-conversation').addEventListener('click', () => openConversation(`pg-${randomId(5)}`));

// Resume lab from the mirror's column buttons
mirror.onCut = (c) => lab.cut(c);
mirror.onResume = (c) => lab.resume(c);

auth.on('change', () => openConversation(app.conversationId));

openConversation(app.conversationId);
document.body.dataset.ready = 'true';
