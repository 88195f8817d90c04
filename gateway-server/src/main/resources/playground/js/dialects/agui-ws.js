// AG-UI over WebSocket, the AGORA profile (/agui/ws): a RunAgentInput starts a run; approvals
// and gateway errors are CUSTOM events. The seq is in "metadata": {"seq"} (the official client
// drops unknown top-level fields), on the last frame of each stored event.

import { WsDialectClient } from './client.js';
import { aguiCoreEvent, aguiTranslator, newRunInput } from './agui-common.js';

export class AguiWsClient extends WsDialectClient {
  static key = 'agui-ws';
  static label = 'AG-UI · WebSocket';
  static transport = 'WebSocket /agui/ws';
  static path = '/agui/ws';

  constructor(ctx) {
    super(ctx);
    this.translator = aguiTranslator({ errorEndsRun: false });
  }

  query(lastSeq) {
    const q = { threadId: this.conversationId };
    if (lastSeq !== null) q.last_seq = String(lastSeq);
    return q;
  }

  seqOf(json) {
    return typeof json.metadata?.seq === 'number' ? json.metadata.seq : null;
  }

  typeOf(json) {
    if (json.type === 'CUSTOM') return `CUSTOM ${json.name}`;
    return json.type ? String(json.type) : 'RunAgentInput';
  }

  send(text) {
    return this.sendJson(newRunInput(this.conversationId, text));
  }

  decide(approval, approved, feedback) {
    const value = { approvalId: approval.approvalId, approved };
    if (feedback) value.feedback = feedback;
    return this.sendJson({ type: 'CUSTOM', name: 'agora:tool_approval_response', value });
  }

  translate(f) {
    if (f.type === 'CUSTOM' && f.name === 'agora:tool_approval_request') {
      const v = f.value ?? {};
      return [{
        kind: 'approval', approvalId: v.approvalId, tool: v.toolName, description: v.toolDescription,
        args: v.parameters, reasoning: v.reasoning, risk: v.riskLevel,
      }];
    }
    if (f.type === 'CUSTOM' && f.name === 'agora:error') {
      const v = f.value ?? {};
      return [{ kind: 'error', code: v.errorCode, message: v.message, details: v.details }];
    }
    return this.translator(f);
  }

  coreEventOf(f) {
    return aguiCoreEvent(f);
  }
}
