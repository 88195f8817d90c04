// Drives the gateway's POST /agui with the official AG-UI 1.0 client (HttpAgent) through every
// demo flow, checks every event against the official zod schemas, and fails on any warning or
// error the client prints. Usage: node agui-official-client.mjs http://127.0.0.1:PORT
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";

const base = process.argv[2];
if (!base) {
  console.error("usage: node agui-official-client.mjs BASE_URL");
  process.exit(2);
}

const complaints = [];
for (const level of ["warn", "error"]) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    complaints.push(`${level}: ${args.map(String).join(" ")}`);
    original(...args);
  };
}

function newAgent() {
  return new HttpAgent({ url: `${base}/agui`, threadId: randomUUID() });
}

/** Runs the agent once with a new user message (if any), returning the events it saw. */
async function run(agent, text, params = {}) {
  if (text !== undefined) {
    agent.addMessage({ id: randomUUID(), role: "user", content: text });
  }
  const events = [];
  let failure;
  try {
    await agent.runAgent(params, {
      onEvent: ({ event }) => {
        events.push(event);
      },
    });
  } catch (e) {
    failure = e;
  }
  for (const e of events) {
    const parsed = EventSchemas.safeParse(e);
    assert.ok(parsed.success, `event ${e.type} fails the official schema: ${JSON.stringify(parsed.error?.issues)}`);
    assert.ok(!JSON.stringify(e).includes(":null"), `event ${e.type} carries a null: ${JSON.stringify(e)}`);
    if (e.timestamp !== undefined) {
      assert.ok(Number.isInteger(e.timestamp), `timestamp of ${e.type} is not an integer`);
    }
  }
  assert.equal(events[0]?.type, "RUN_STARTED", "the first event is RUN_STARTED");
  return { events, failure };
}

const textOf = (events) =>
  events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
const types = (events) => events.map((e) => e.type);
const last = (events) => events[events.length - 1];

function assertSuccess({ events, failure }) {
  assert.equal(failure, undefined, `the run failed: ${failure}`);
  assert.equal(last(events).type, "RUN_FINISHED", `the run ended with ${JSON.stringify(last(events))}`);
  assert.equal(last(events).outcome?.type ?? "success", "success");
}

async function interrupted(agent, text) {
  const first = await run(agent, text);
  assert.equal(first.failure, undefined, `the run failed: ${first.failure}`);
  const end = last(first.events);
  assert.equal(end.type, "RUN_FINISHED", `the run ended with ${JSON.stringify(end)}`);
  assert.equal(end.outcome?.type, "interrupt");
  assert.equal(agent.pendingInterrupts.length, 1);
  const interrupt = agent.pendingInterrupts[0];
  assert.equal(interrupt.reason, "tool_call");
  assert.ok(interrupt.toolCallId, "the interrupt names its tool call");
  return interrupt;
}

const flows = {
  async basic() {
    const agent = newAgent();
    const r = await run(agent, "What are the regulations for food storage?");
    assertSuccess(r);
    assert.match(textOf(r.events), /chilled food/);
    assert.ok(types(r.events).includes("STEP_STARTED"));
    assert.ok(agent.messages.some((m) => m.role === "assistant" && /chilled food/.test(m.content)));
  },

  async tool() {
    const r = await run(newAgent(), "Search for restaurant regulations");
    assertSuccess(r);
    const start = r.events.find((e) => e.type === "TOOL_CALL_START");
    assert.equal(start?.toolCallName, "search_regulations");
    const result = r.events.find((e) => e.type === "TOOL_CALL_RESULT");
    assert.equal(result?.content, "Found 5 relevant regulations");
    assert.equal(result?.toolCallId, start.toolCallId);
  },

  async approvalApproved() {
    const agent = newAgent();
    const interrupt = await interrupted(agent, "Generate the inspection report");
    const r = await run(agent, undefined, {
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: true } }],
    });
    assertSuccess(r);
    const start = r.events.find((e) => e.type === "TOOL_CALL_START");
    assert.equal(start?.toolCallName, "generate_inspection_report");
    assert.equal(start?.toolCallId, interrupt.toolCallId);
    assert.match(textOf(r.events), /was generated/);
    assert.equal(agent.pendingInterrupts.length, 0);
  },

  async approvalRejected() {
    const agent = newAgent();
    const interrupt = await interrupted(agent, "report please");
    const r = await run(agent, undefined, {
      resume: [{ interruptId: interrupt.id, status: "resolved", payload: { approved: false, feedback: "Not yet" } }],
    });
    assertSuccess(r);
    assert.ok(!types(r.events).includes("TOOL_CALL_START"), "a rejected tool does not run");
    assert.match(textOf(r.events), /not generated/);
  },

  async approvalCancelled() {
    const agent = newAgent();
    const interrupt = await interrupted(agent, "report");
    const r = await run(agent, undefined, { resume: [{ interruptId: interrupt.id, status: "cancelled" }] });
    assertSuccess(r);
    assert.ok(!types(r.events).includes("TOOL_CALL_START"), "a cancelled tool does not run");
    assert.match(textOf(r.events), /not generated/);
  },

  async crash() {
    const r = await run(newAgent(), "crash");
    assert.equal(last(r.events).type, "RUN_ERROR", "nothing follows RUN_ERROR");
    assert.ok(last(r.events).message.length > 0);
    assert.equal(types(r.events).filter((t) => t === "RUN_ERROR").length, 1);
  },

  async historyAcrossRuns() {
    const agent = newAgent();
    assertSuccess(await run(agent, "hello"));
    assertSuccess(await run(agent, "search something"));
    const r = await run(agent, "history");
    assertSuccess(r);
    assert.match(textOf(r.events), /2 earlier messages/);
  },

  async unansweredInterruptIsRefused() {
    const agent = newAgent();
    await interrupted(agent, "report");
    const res = await fetch(`${base}/agui`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({
        threadId: agent.threadId, runId: randomUUID(), state: {}, tools: [], context: [], forwardedProps: {},
        messages: [...agent.messages, { id: randomUUID(), role: "user", content: "something else" }],
      }),
    });
    assert.equal(res.status, 409);
    const body = await res.json();
    assert.equal(body.error.code, "run_in_progress");
    assert.match(body.error.message, /approval/);
  },
};

let passed = 0;
let failed = 0;
const only = process.argv[3];
for (const [name, flow] of Object.entries(flows)) {
  if (only && only !== name) continue;
  complaints.length = 0;
  try {
    await flow();
    assert.deepEqual(complaints, [], "the client printed warnings or errors");
    passed++;
    console.log(JSON.stringify({ flow: name, ok: true }));
  } catch (e) {
    failed++;
    console.log(JSON.stringify({ flow: name, ok: false, error: String(e?.stack ?? e) }));
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
