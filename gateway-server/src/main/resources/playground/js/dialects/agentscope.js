// The AgentScope Agent API (POST /process), server-sent events of response, message and content
// objects, each with a sequence_number per request. Approvals are mcp_approval_request messages,
// answered by a new request whose input holds an mcp_approval_response. The cursor is the SSE
// "id:" line; GET /process/sessions/<id>/events reattaches from it.

import { SseDialectClient } from './client.js';

export class AgentScopeClient extends SseDialectClient {
  static key = 'agentscope';
  static label = 'AgentScope';
  static transport = 'POST /process, server-sent events';

  eventsPath() {
    return `/process/sessions/${encodeURIComponent(this.conversationId)}/events`;
  }

  typeOf(json) {
    if (json.object === 'message') return `message ${json.type === 'message' ? '' : json.type ?? ''} ${json.status}`.replace(/\s+/g, ' ');
    if (json.object === 'content') return `content ${json.type ?? ''} ${json.status}`.replace(/\s+/g, ' ');
    if (json.object === 'response') return `response ${json.status}`;
    return String(json.object ?? json.type ?? '?');
  }

  typeOfRequest(body) {
    return Array.isArray(body.input) ? 'AgentRequest (decision)' : 'AgentRequest';
  }

  send(text) {
    this.request('POST', '/process', { input: text, session_id: this.conversationId, stream: true });
    return true;
  }

  decide(approval, approved, feedback) {
    const data = { approval_request_id: approval.approvalId, approve: approved };
    if (feedback) data.reason = feedback;
    this.request('POST', '/process', {
      session_id: this.conversationId,
      stream: true,
      input: [{ type: 'mcp_approval_response', role: 'user', content: [{ type: 'data', data }] }],
    });
    return true;
  }

  translate(f) {
    if (f.object === 'response') {
      if (f.status === 'in_progress') return [{ kind: 'run-start' }];
      if (f.status === 'failed') return [{ kind: 'error', code: f.error?.code, message: f.error?.message }, { kind: 'run-end', ok: false }];
      if (f.status === 'completed') {
        const waiting = (f.output ?? []).some((m) => m.type === 'mcp_approval_request');
        return [{ kind: 'run-end', ok: true, interrupted: waiting }];
      }
      return [];
    }
    if (f.object === 'content' && f.type === 'text') {
      return f.delta ? [{ kind: 'text', messageId: f.msg_id, delta: f.text }] : [{ kind: 'text-end', messageId: f.msg_id }];
    }
    if (f.object === 'message' && f.status === 'completed') {
      const data = f.content?.find((c) => c.type === 'data')?.data ?? {};
      if (f.type === 'function_call') {
        return [{ kind: 'tool', toolCallId: data.call_id, name: data.name, args: parseJson(data.arguments), status: 'started' }];
      }
      if (f.type === 'function_call_output') {
        return [{ kind: 'tool', toolCallId: data.call_id, name: data.name, status: 'completed', result: data.output }];
      }
      if (f.type === 'mcp_approval_request') {
        // The dialect carries the tool and its arguments; reasoning and risk have no field here.
        return [{ kind: 'approval', approvalId: data.id ?? f.id, tool: data.name, args: parseJson(data.arguments) }];
      }
    }
    return [];
  }

  coreEventOf(f) {
    if (f.object === 'response') return { in_progress: 'RunStarted', completed: 'RunFinished', failed: 'RunFailed' }[f.status] ?? null;
    if (f.object === 'content') return f.delta ? 'TextDelta' : 'MessageCompleted';
    if (f.object === 'message') {
      if (f.type === 'mcp_approval_request') return 'ApprovalRequested';
      if (f.type === 'function_call') return f.status === 'created' ? 'ToolCallStarted' : 'ToolCallCompleted';
      if (f.type === 'function_call_output') return 'ToolResult';
      return f.status === 'created' ? 'MessageStarted' : 'MessageCompleted';
    }
    return null;
  }
}

function parseJson(text) {
  try {
    return typeof text === 'string' ? JSON.parse(text) : text;
  } catch {
    return text;
  }
}
