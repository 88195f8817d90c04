// Small helpers to build the page's elements without a framework.

/**
 * Creates an element. `attrs` holds attributes; `class`, `text` and `on<event>` handlers are
 * treated specially; a value of null or false leaves the attribute out.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Removes every child of an element. */
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/** "14:03:07.123", the local time of day with milliseconds. */
export function clock(ms) {
  const d = new Date(ms);
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** "312 B", "1.4 kB". */
export function size(bytes) {
  return bytes < 1000 ? `${bytes} B` : `${(bytes / 1000).toFixed(1)} kB`;
}

/** JSON indented for reading, or the text itself when it is not JSON. */
export function pretty(json, text) {
  return json === null || json === undefined ? text : JSON.stringify(json, null, 2);
}

/** A short random id, hex. */
export function randomId(bytes = 8) {
  const a = new Uint8Array(bytes);
  crypto.getRandomValues(a);
  return Array.from(a, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Tells screen readers something, politely. */
export function announce(text) {
  const region = document.getElementById('announcer');
  if (region) {
    region.textContent = '';
    setTimeout(() => { region.textContent = text; }, 30);
  }
}
