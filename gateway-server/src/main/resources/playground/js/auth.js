// Authentication: the token is kept in this tab only (session storage); its claims are decoded
// (not verified: the gateway does that) and shown, and a refused token is explained with the
// gateway's own reason, read from an HTTP request (a browser never sees a refused WebSocket's
// status).

import { Emitter } from './emitter.js';
import { clear, h } from './dom.js';

const STORAGE = 'switchboard.token';

export class Auth extends Emitter {
  constructor(required) {
    super();
    this.required = required;
  }

  token() {
    return this.required ? sessionStorage.getItem(STORAGE) : null;
  }

  set(token) {
    if (token) sessionStorage.setItem(STORAGE, token);
    else sessionStorage.removeItem(STORAGE);
  }

  /** The token's claims, or null when it is not a JWT. */
  claims() {
    const t = this.token();
    const part = t?.split('.')[1];
    if (!part) return null;
    try {
      const json = atob(part.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(part.length / 4) * 4, '='));
      return JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
    } catch {
      return null;
    }
  }

  /** What the gateway says of the token: {ok: true} or {ok: false, reason}. */
  async probe() {
    const headers = {};
    const t = this.token();
    if (t) headers.Authorization = `Bearer ${t}`;
    const res = await fetch('/process/sessions/playground-token-check/events', { headers });
    if (res.status !== 401) return { ok: true };
    const body = await res.json().catch(() => ({}));
    return { ok: false, reason: body.error?.message ?? 'refused' };
  }
}

function when(seconds) {
  const d = new Date(seconds * 1000);
  const delta = Math.round((seconds * 1000 - Date.now()) / 60000);
  const rel = delta === 0 ? 'now' : delta > 0 ? `in ${delta} min` : `${-delta} min ago`;
  return `${d.toLocaleString()} (${rel})`;
}

/**
 * The authentication box: shown only when the gateway asks for tokens. A token is checked with the
 * gateway before any connection uses it; `auth` emits 'change' when connections should be opened
 * again (a token accepted, or forgotten).
 */
export function mountAuth(auth) {
  const box = document.getElementById('auth');
  const input = document.getElementById('auth-token');
  const claimsEl = document.getElementById('auth-claims');
  const problem = document.getElementById('auth-problem');
  if (!auth.required) return { explain: async () => {}, ready: () => true };
  box.hidden = false;

  const renderClaims = () => {
    clear(claimsEl);
    const claims = auth.claims();
    if (!auth.token()) {
      claimsEl.append(h('p', { class: 'hint' }, 'No token yet: paste one to connect.'));
      return;
    }
    if (!claims) {
      claimsEl.append(h('p', { class: 'problem' }, 'This is not a JWT (three base64url parts separated by dots).'));
      return;
    }
    const rows = Object.entries(claims).map(([k, v]) => h('tr', {},
      h('th', { scope: 'row' }, k),
      h('td', {}, ['exp', 'iat', 'nbf'].includes(k) && typeof v === 'number' ? when(v) : JSON.stringify(v))));
    claimsEl.append(h('table', { 'aria-label': 'Claims of the token' }, h('caption', { class: 'visually-hidden' }, 'Claims of the token'), rows));
    if (typeof claims.exp === 'number' && claims.exp * 1000 < Date.now()) {
      claimsEl.append(h('p', { class: 'problem' }, 'This token has expired: the gateway will refuse it.'));
    }
  };

  let accepted = false;
  const explain = async () => {
    const r = auth.token() ? await auth.probe().catch(() => ({ ok: true })) : { ok: false, reason: 'no token was given' };
    accepted = r.ok;
    problem.hidden = r.ok;
    if (!r.ok) {
      problem.textContent = `The gateway refused the token: ${r.reason}. `
        + 'It checks the signature, exp and nbf (with some clock skew) and that sub is not empty; paste a valid token.';
    }
    return r.ok;
  };

  document.getElementById('auth-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    auth.set(input.value.trim());
    input.value = '';
    renderClaims();
    if (await explain()) auth.emit('change');
  });
  document.getElementById('auth-forget').addEventListener('click', () => {
    auth.set(null);
    accepted = false;
    renderClaims();
    problem.hidden = true;
    auth.emit('change');
  });
  renderClaims();
  if (auth.token()) {
    explain().then((ok) => {
      if (ok) auth.emit('change');
    });
  }
  return { explain, ready: () => accepted };
}
