// The peer: what a TypeScript team would build instead of the gateway for the same workload.
// It answers `benchmark <n>` with the AG-UI events the gateway sends for it (RUN_STARTED, a status
// STATE_SNAPSHOT, TEXT_MESSAGE_START, n TEXT_MESSAGE_CONTENT, TEXT_MESSAGE_END, a status
// STATE_SNAPSHOT, RUN_FINISHED), each made when it is sent and serialised by the official
// @ag-ui/encoder: over a WebSocket with `ws` (any path; one JSON text frame per event), and over
// HTTP + SSE on POST /agui. Events are yielded by an async generator, as an agent's would be, and
// the sender waits while the socket's buffer is full, as the gateway does.
//
//   node peer.mjs --port 8600 [--chunk "token "]
import http from 'node:http';
import { WebSocketServer } from 'ws';
import { EventEncoder } from '@ag-ui/encoder';
import { EventType } from '@ag-ui/core';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const port = Number(opt('--port', '8600'));
const chunk = opt('--chunk', 'token ');
const HIGH_WATER = 64 * 1024;
const encoder = new EventEncoder();

function hex32() {
  let s = '';
  for (let i = 0; i < 4; i++) s += Math.floor(Math.random() * 0x100000000).toString(16).padStart(8, '0');
  return s;
}

function chunksOf(input) {
  const last = input.messages?.[input.messages.length - 1];
  const m = /^benchmark\s+(\d+)$/i.exec(String(last?.content ?? '').trim());
  const n = m ? Number(m[1]) : 0;
  return n >= 1 && n <= 100000 ? n : 0;
}

async function* run(input, n) {
  const threadId = input.threadId;
  const runId = input.runId ?? `run_${hex32()}`;
  const messageId = `msg_${hex32()}`;
  yield { type: EventType.RUN_STARTED, threadId, runId, timestamp: Date.now() };
  yield { type: EventType.STATE_SNAPSHOT, snapshot: { threadId, runId, status: 'processing' }, timestamp: Date.now() };
  yield { type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant', timestamp: Date.now() };
  for (let i = 0; i < n; i++) {
    yield { type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta: chunk, timestamp: Date.now() };
  }
  yield { type: EventType.TEXT_MESSAGE_END, messageId, timestamp: Date.now() };
  yield { type: EventType.STATE_SNAPSHOT, snapshot: { threadId, runId, status: 'completed' }, timestamp: Date.now() };
  yield { type: EventType.RUN_FINISHED, threadId, runId, timestamp: Date.now() };
}

// The encoder writes server-sent events (`data: <json>\n\n`); a WebSocket frame is the JSON alone.
const asFrame = (event) => {
  const sse = encoder.encode(event);
  return sse.slice(6, -2);
};

const drained = (socket) => new Promise((resolve) => socket.once('drain', resolve));

const server = http.createServer(async (req, res) => {
  if (req.method !== 'POST' || req.url !== '/agui') {
    res.writeHead(404).end();
    return;
  }
  let body = '';
  for await (const part of req) body += part;
  let input;
  try {
    input = JSON.parse(body);
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"code":"invalid_json"}}');
    return;
  }
  res.writeHead(200, { 'content-type': encoder.getContentType(), 'cache-control': 'no-cache' });
  for await (const event of run(input, chunksOf(input))) {
    if (!res.write(encoder.encodeSSE(event))) await drained(res);
  }
  res.end();
});

const wss = new WebSocketServer({ server, perMessageDeflate: false, maxPayload: 65536 });
wss.on('connection', (ws) => {
  ws.on('message', async (data) => {
    let input;
    try {
      input = JSON.parse(data.toString());
    } catch {
      return;
    }
    const n = chunksOf(input);
    if (!n) return;
    for await (const event of run(input, n)) {
      ws.send(asFrame(event));
      if (ws.bufferedAmount > HIGH_WATER && ws._socket.writableNeedDrain) await drained(ws._socket);
    }
  });
});

server.keepAliveTimeout = 120_000;
server.listen(port, '127.0.0.1', () => console.log(`peer serving agui-ws and agui-sse on port ${port}`));
process.on('SIGTERM', () => process.exit(0));
