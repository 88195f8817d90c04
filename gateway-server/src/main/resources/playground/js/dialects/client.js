// What every dialect client shares: the frames it records, the seqs it saw, its state, and the
// two transports (WebSocket, and HTTP requests answered with server-sent events).

import { Emitter } from '../emitter.js';
import { readEvents } from '../sse.js';

const encoder = new TextEncoder();
let frameCount = 0;

/**
 * One connection of the page to the conversation in one dialect.
 *
 * Emits 'frame' (every frame in or out, raw), 'view' (what the frame means, in the small shape
 * the chat shows: run-start, step, text, text-end, reasoning, tool, approval, error, run-end) and
 * 'state'. Subclasses say how their dialect's frames look (seqOf, typeOf, translate) and how it
 * starts a run and answers an approval (send, decide).
 */
export class DialectClient extends Emitter {
  /**
   * @param ctx {conversationId, auth, frames, purpose} — purpose 'live' for the page's columns,
   *            'check' for the resume lab's reference replays
   */
  constructor(ctx) {
    super();
    this.ctx = ctx;
    this.conversationId = ctx.conversationId;
    this.state = 'closed';
    /** The highest seq received: the resume cursor. */
    this.cursor = null;
    /** Every seq received, in arrival order. */
    this.seqs = [];
    /** The first seq of the run this client is in (or last was in), and whether a run is open. */
    this.runFirstSeq = null;
    this.inRun = false;
  }

  /** Whether a person can answer an approval through this dialect. */
  get answersApprovals() {
    return true;
  }

  setState(state, detail = '') {
    this.state = state;
    this.stateDetail = detail;
    this.emit('state', { state, detail });
  }

  /** Records one frame (in or out), and the seq it carries. */
  record(dir, text, { seq = null, type = '', json = null, note = '' } = {}) {
    const frame = {
      n: ++frameCount,
      t: Date.now(),
      dialect: this.constructor.key,
      conn: this.constructor.label,
      purpose: this.ctx.purpose,
      dir,
      type,
      seq,
      size: encoder.encode(text).length,
      text,
      json,
      note,
    };
    if (seq !== null && dir === 'in') {
      this.seqs.push(seq);
      if (!this.inRun) {
        this.inRun = true;
        this.runFirstSeq = seq;
      }
      if (this.cursor === null || seq > this.cursor) this.cursor = seq;
    }
    this.ctx.frames?.add(frame);
    this.emit('frame', frame);
    return frame;
  }

  /** Emits what an inbound frame means. */
  show(views, frame) {
    for (const v of views) {
      if (v.kind === 'run-end') this.inRun = false;
      this.emit('view', { ...v, seq: frame.seq, frame });
    }
  }

  /** Parses an inbound JSON text and records it with its seq and type, then shows what it means. */
  receive(text, sseId = null) {
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      // shown raw
    }
    const seq = sseId !== null && sseId !== '' ? Number(sseId) : json ? this.seqOf(json) : null;
    const frame = this.record('in', text, { seq: Number.isFinite(seq) ? seq : null, type: json ? this.typeOf(json) : 'text', json });
    if (json) this.show(this.translate(json), frame);
    return frame;
  }

  /** The seq a frame carries, or null. */
  seqOf(json) {
    return typeof json.seq === 'number' ? json.seq : null;
  }

  /** A short name of the frame's kind, for the log's filter. */
  typeOf(json) {
    return String(json.type ?? '?');
  }

  /** What the frame means for the chat, as view items. */
  translate() {
    return [];
  }

  /** The core event a frame carrying a seq most likely shows (for the mirror's row labels), or null. */
  coreEventOf() {
    return null;
  }

  /** Starts following the conversation: joins it (WebSocket) or reattaches to its stream (SSE). */
  open() {}

  /** Drops the connection on purpose (the resume lab's cut). */
  cut() {}

  /** Reconnects from the cursor. */
  resume() {}

  close() {}

  /** Something happened in the conversation up to `seq` (seen by another column). */
  poke() {}

  /** The headers of an HTTP request: JSON, and the token when there is one. */
  headers(extra = {}) {
    const h = { ...extra };
    const token = this.ctx.auth?.token();
    if (token) h.Authorization = `Bearer ${token}`;
    return h;
  }
}

/** A dialect over one WebSocket that joins the conversation through its URL. */
export class WsDialectClient extends DialectClient {
  /** The path and query joining the conversation, from `lastSeq` when given. */
  path() {
    throw new Error('abstract');
  }

  url(lastSeq) {
    const params = new URLSearchParams(this.query(lastSeq));
    const token = this.ctx.auth?.token();
    if (token) params.set('token', token);
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    return `${scheme}://${location.host}${this.constructor.path}?${params}`;
  }

  open({ lastSeq = null } = {}) {
    this.closeSocket();
    const url = this.url(lastSeq);
    const shown = url.replace(/([?&]token=)[^&]*/, '$1…');
    this.record('out', `GET ${shown.replace(/^wss?:\/\/[^/]+/, '')} (WebSocket upgrade)`, { type: 'upgrade', note: lastSeq !== null ? `resume after seq ${lastSeq}` : 'join' });
    this.setState('connecting');
    const ws = new WebSocket(url);
    this.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.setState('open', lastSeq !== null ? `resumed after seq ${lastSeq}` : 'joined');
    };
    ws.onmessage = (e) => {
      if (ws === this.ws) this.receive(typeof e.data === 'string' ? e.data : '(binary frame)');
    };
    ws.onclose = (e) => {
      if (ws !== this.ws) return;
      this.ws = null;
      if (this.state === 'cut') return;
      if (!opened) {
        this.setState('failed', 'the WebSocket did not open');
        this.emit('refused', { url: shown });
      } else {
        this.setState('closed', `closed ${e.code}${e.reason ? ` ${e.reason}` : ''}`);
      }
    };
  }

  sendJson(obj) {
    const text = JSON.stringify(obj);
    if (this.ws && this.ws.readyState === WebSocket.CONNECTING) {
      this.ws.addEventListener('open', () => this.sendJson(obj), { once: true });
      return true;
    }
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) {
      this.emit('view', { kind: 'error', code: 'not_connected', message: `${this.constructor.label} is not connected; reconnect it first` });
      return false;
    }
    this.record('out', text, { type: this.typeOf(obj), json: obj });
    this.ws.send(text);
    return true;
  }

  cut() {
    if (!this.ws) return;
    this.record('out', 'close (cut by the resume lab)', { type: 'close' });
    this.setState('cut', `cut after seq ${this.cursor ?? 'none'}`);
    this.closeSocket();
  }

  resume() {
    this.open({ lastSeq: this.cursor ?? 0 });
  }

  closeSocket() {
    const ws = this.ws;
    this.ws = null;
    if (ws && ws.readyState <= WebSocket.OPEN) ws.close(1000, 'closed by the playground');
  }

  close() {
    this.setState('closed');
    this.closeSocket();
  }
}

/**
 * A dialect over HTTP: each run is a POST answered with server-sent events, and the page follows
 * runs started elsewhere by reattaching (GET …/events with Last-Event-ID) when another column shows
 * an event this one has not seen.
 */
export class SseDialectClient extends DialectClient {
  /** The reattach path of the conversation. */
  eventsPath() {
    throw new Error('abstract');
  }

  get streaming() {
    return this.controller !== undefined && this.controller !== null;
  }

  open() {
    this.setState('idle', 'follows the conversation');
    this.follow();
  }

  /** Reattaches from the cursor (the active or last run from its start when there is none). */
  follow() {
    const headers = {};
    if (this.cursor !== null) headers['Last-Event-ID'] = String(this.cursor);
    return this.request('GET', this.eventsPath(), null, headers);
  }

  poke(seq) {
    if (this.streaming || this.state === 'cut' || this.state === 'closed') return;
    if (this.cursor === null || seq > this.cursor) this.follow();
  }

  /** POSTs a body (or GETs), recording the request and every event of its answer. */
  async request(method, path, body, extraHeaders = {}) {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const text = body === null ? '' : JSON.stringify(body);
    const head = Object.entries(extraHeaders).map(([k, v]) => `${k}: ${v}`).join(', ');
    this.record('out', body === null ? `${method} ${path}${head ? ` (${head})` : ''}` : text,
      { type: body === null ? `${method} reattach` : this.typeOfRequest(body), json: body, note: `${method} ${path}` });
    this.setState('streaming', `${method} ${path}`);
    try {
      const res = await fetch(path, {
        method,
        headers: this.headers(body === null ? extraHeaders : { 'Content-Type': 'application/json', ...extraHeaders }),
        body: body === null ? undefined : text,
        signal: controller.signal,
      });
      if (res.status === 204) {
        this.record('in', '204 No Content', { type: 'HTTP 204', note: 'nothing after the cursor' });
      } else if (!res.ok) {
        const errText = await res.text();
        let json = null;
        try {
          json = JSON.parse(errText);
        } catch {
          // not JSON
        }
        const frame = this.record('in', errText || `HTTP ${res.status}`, { type: `HTTP ${res.status}`, json });
        if (res.status !== 404 || method !== 'GET') {
          this.show([{ kind: 'error', status: res.status, code: json?.error?.code ?? `http_${res.status}`, message: json?.error?.message ?? res.statusText }], frame);
        }
        if (res.status === 401) this.emit('refused', { status: 401, message: json?.error?.message });
      } else {
        await readEvents(res, (ev) => this.receive(ev.data, ev.id));
      }
      if (this.controller === controller) {
        this.controller = null;
        this.setState('idle', 'follows the conversation');
      }
      return res.status;
    } catch (e) {
      if (this.controller === controller) this.controller = null;
      if (e.name === 'AbortError') return 0;
      this.setState('failed', String(e.message ?? e));
      this.show([{ kind: 'error', code: 'network', message: `the request failed: ${e.message ?? e}` }], { seq: null });
      return -1;
    }
  }

  typeOfRequest() {
    return 'request';
  }

  cut() {
    if (!this.controller) return;
    this.record('out', 'abort (cut by the resume lab)', { type: 'close' });
    this.setState('cut', `cut after seq ${this.cursor ?? 'none'}`);
    const c = this.controller;
    this.controller = null;
    c.abort();
  }

  resume() {
    this.setState('idle');
    this.follow();
  }

  close() {
    this.setState('closed');
    const c = this.controller;
    this.controller = null;
    c?.abort();
  }
}
