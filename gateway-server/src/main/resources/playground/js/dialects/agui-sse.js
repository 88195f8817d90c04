// AG-UI 1.0 over HTTP + server-sent events (POST /agui), the official client's transport. A run
// that needs an approval ends with an interrupt; the next request's "resume" answers it. The
// cursor is the SSE "id:" line; GET /agui/threads/<id>/events reattaches from it.

import { SseDialectClient } from './client.js';
import { aguiCoreEvent, aguiTranslator, newRunInput } from './agui-common.js';
import { randomId } from '../dom.js';

export class AguiSseClient extends SseDialectClient {
  static key = 'agui-sse';
  static label = 'AG-UI · HTTP+SSE';
  static transport = 'POST /agui, server-sent events';

  constructor(ctx) {
    super(ctx);
    this.translator = aguiTranslator({ errorEndsRun: true });
  }

  eventsPath() {
    return `/agui/threads/${encodeURIComponent(this.conversationId)}/events`;
  }

  typeOf(json) {
    return json.type === 'CUSTOM' ? `CUSTOM ${json.name}` : String(json.type ?? '?');
  }

  typeOfRequest(body) {
    return body.resume ? 'RunAgentInput (resume)' : 'RunAgentInput';
  }

  send(text) {
    this.request('POST', '/agui', newRunInput(this.conversationId, text));
    return true;
  }

  decide(approval, approved, feedback) {
    const payload = { approved };
    if (feedback) payload.feedback = feedback;
    this.request('POST', '/agui', {
      threadId: this.conversationId,
      runId: `run_pg_${randomId(6)}`,
      messages: [],
      resume: [{ interruptId: approval.approvalId, status: 'resolved', payload }],
    });
    return true;
  }

  translate(f) {
    return this.translator(f);
  }

  coreEventOf(f) {
    return aguiCoreEvent(f);
  }
}
