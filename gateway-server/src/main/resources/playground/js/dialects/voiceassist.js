// VoiceAssist over WebSocket (/api/realtime/ws): message and ping out; connected, message_start,
// message_chunk, message_complete, pong and error in. Steps, tool calls, approvals and reasoning
// are not part of the dialect. Frames showing a stored event carry a top-level "seq".

import { WsDialectClient } from './client.js';

export class VoiceAssistClient extends WsDialectClient {
  static key = 'voiceassist';
  static label = 'VoiceAssist';
  static transport = 'WebSocket /api/realtime/ws';
  static path = '/api/realtime/ws';

  get answersApprovals() {
    return false;
  }

  query(lastSeq) {
    const q = { conversationId: this.conversationId };
    if (lastSeq !== null) q.last_seq = String(lastSeq);
    return q;
  }

  send(text) {
    return this.sendJson({ type: 'message', content: text });
  }

  decide() {
    return false;
  }

  translate(f) {
    switch (f.type) {
      case 'message_start':
        return this.running ? [] : this.begin();
      case 'message_chunk':
        return [...(this.running ? [] : this.begin()), { kind: 'text', messageId: f.message_id, delta: f.content }];
      case 'message_complete':
        this.running = false;
        // The dialect has no frame for a run's end: the last message_complete, or an error, is it.
        return [{ kind: 'text-end', messageId: f.message_id, citations: f.citations ?? [] }, { kind: 'run-end', ok: true }];
      case 'error':
        if (f.seq === undefined) return [{ kind: 'error', code: f.error?.code, message: f.error?.message }];
        this.running = false;
        return [{ kind: 'error', code: f.error?.code, message: f.error?.message }, { kind: 'run-end', ok: false }];
      default:
        return [];
    }
  }

  begin() {
    this.running = true;
    return [{ kind: 'run-start' }];
  }

  coreEventOf(f) {
    return { message_start: 'MessageStarted', message_chunk: 'TextDelta', message_complete: 'MessageCompleted', error: 'RunFailed' }[f.type] ?? null;
  }
}
