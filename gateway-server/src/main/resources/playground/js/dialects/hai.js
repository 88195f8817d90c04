// HAI over WebSocket (/hai/ws): user_message and tool_approval_response out; status,
// assistant_message_chunk, assistant_message, tool_call, tool_approval_request and error in.
// Every frame showing a stored event has a top-level "seq".

import { WsDialectClient } from './client.js';

export class HaiClient extends WsDialectClient {
  static key = 'hai';
  static label = 'HAI';
  static transport = 'WebSocket /hai/ws';
  static path = '/hai/ws';

  query(lastSeq) {
    const q = { session_id: this.conversationId };
    if (lastSeq !== null) q.last_seq = String(lastSeq);
    return q;
  }

  typeOf(json) {
    if (json.type === 'status') return `status ${json.status}`;
    if (json.type === 'tool_call') return `tool_call ${json.status}`;
    return String(json.type ?? '?');
  }

  send(text) {
    return this.sendJson({ type: 'user_message', content: text, session_id: this.conversationId });
  }

  decide(approval, approved, feedback) {
    const msg = { type: 'tool_approval_response', approval_id: approval.approvalId, approved };
    if (feedback) msg.feedback = feedback;
    return this.sendJson(msg);
  }

  translate(f) {
    switch (f.type) {
      case 'status':
        if (f.status === 'completed') return [{ kind: 'run-end', ok: !this.failed }];
        if (f.status === 'thinking' && !this.running) {
          this.running = true;
          this.failed = false;
          return [{ kind: 'run-start' }, { kind: 'step', name: 'thinking' }];
        }
        return [{ kind: 'step', name: f.status }];
      case 'assistant_message_chunk': {
        const out = [];
        if (f.content) out.push({ kind: 'text', messageId: f.message_id, delta: f.content });
        if (f.is_final) out.push({ kind: 'text-end', messageId: f.message_id, citations: f.metadata?.citations ?? [] });
        return out;
      }
      case 'assistant_message':
        return [{ kind: 'text', messageId: `whole-${f.seq}`, delta: f.content },
          { kind: 'text-end', messageId: `whole-${f.seq}`, citations: f.metadata?.citations ?? [] }];
      case 'tool_call':
        return [{ kind: 'tool', toolCallId: f.tool_call_id, name: f.tool_name, args: f.parameters, status: f.status, result: f.result }];
      case 'tool_approval_request':
        return [{
          kind: 'approval', approvalId: f.approval_id, tool: f.tool_name, description: f.tool_description,
          args: f.parameters, reasoning: f.reasoning, risk: f.risk_level,
        }];
      case 'error':
        if (f.details?.run_id) this.failed = true;
        return [{ kind: 'error', code: f.error_code, message: f.message, details: f.details }];
      default:
        return [];
    }
  }

  show(views, frame) {
    super.show(views, frame);
    if (views.some((v) => v.kind === 'run-end')) this.running = false;
  }

  coreEventOf(f) {
    switch (f.type) {
      case 'status':
        return { thinking: 'RunStarted', completed: 'RunFinished' }[f.status] ?? 'StepStarted';
      case 'assistant_message_chunk':
        return f.is_final ? 'MessageCompleted' : 'TextDelta';
      case 'assistant_message':
        return 'MessageCompleted';
      case 'tool_call':
        return f.status === 'started' ? 'ToolCallCompleted' : 'ToolResult';
      case 'tool_approval_request':
        return 'ApprovalRequested';
      default:
        return null;
    }
  }
}
