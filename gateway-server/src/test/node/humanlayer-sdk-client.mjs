// An agent using the unmodified HumanLayer SDK (@humanlayer/sdk 0.7.9), pointed at the gateway
// by HUMANLAYER_API_BASE and HUMANLAYER_API_KEY, asks people through it. Each flow's call is
// answered by the JUnit side (A2hSdkClientTest): a person on a HAI WebSocket of the flow's
// session, or the respond endpoint. Usage: node humanlayer-sdk-client.mjs NONCE
// (the flows' sessions are "<NONCE>-<flow>").
import { HumanLayer } from "@humanlayer/sdk";
import assert from "node:assert/strict";

const nonce = process.argv[2];
if (!nonce || !process.env.HUMANLAYER_API_BASE || !process.env.HUMANLAYER_API_KEY) {
  console.error("usage: HUMANLAYER_API_BASE=… HUMANLAYER_API_KEY=… node humanlayer-sdk-client.mjs NONCE");
  process.exit(2);
}

// The SDK polls every 3 s; its public `sleep` option shortens the wait to keep the suite quick.
const sleep = () => new Promise((resolve) => setTimeout(resolve, 200));
const session = (flow) => ({ session: { session_id: `${nonce}-${flow}` } });
const agent = (params = {}) => new HumanLayer({ runId: `${nonce}-agent`, sleep, ...params });

const flows = {
  async approvedWithACommentOnHai() {
    const status = await agent().fetchHumanApproval({
      spec: { fn: "send_email", kwargs: { to: "ap@example.com", subject: "Invoice 7" }, channel: session("approve") },
    });
    assert.equal(status.approved, true);
    assert.equal(status.comment, "ship it");
    assert.ok(!Number.isNaN(Date.parse(status.requested_at)), "requested_at is a date");
    assert.ok(Date.parse(status.responded_at) >= Date.parse(status.requested_at), "responded after requested");
    assert.equal(status.user_info?.id, "anonymous");
  },

  async deniedOnHai() {
    const status = await agent().fetchHumanApproval({
      spec: { fn: "wire_money", kwargs: { amount: 5000 }, channel: session("deny") },
    });
    assert.equal(status.approved, false);
    assert.equal(status.comment, "not this one");
  },

  async queuedBeforeAnyoneIsConnected() {
    const status = await agent().fetchHumanApproval({
      spec: { fn: "archive_inbox", kwargs: {}, channel: session("queued") },
    });
    assert.equal(status.approved, true);
  },

  async requireApprovalWrapsAFunction() {
    const hl = agent({ contactChannel: session("wrapped") });
    let ran = 0;
    async function sendReminder({ to }) {
      ran++;
      return `reminder sent to ${to}`;
    }
    const guarded = hl.requireApproval()(sendReminder);
    assert.equal(guarded.name, "sendReminder");
    assert.equal(await guarded({ to: "team@example.com" }), "reminder sent to team@example.com");
    assert.equal(ran, 1);
  },

  async fetchHumanResponseAnsweredThroughRespond() {
    const answer = await agent().fetchHumanResponse({
      spec: { msg: "Which cost centre should I bill?", channel: session("respond") },
    });
    assert.equal(answer, "CC-42");
  },
};

let passed = 0;
let failed = 0;
for (const [name, flow] of Object.entries(flows)) {
  try {
    await flow();
    passed++;
    console.log(JSON.stringify({ flow: name, ok: true }));
  } catch (e) {
    failed++;
    console.log(JSON.stringify({ flow: name, ok: false, error: String(e?.stack ?? e) }));
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
