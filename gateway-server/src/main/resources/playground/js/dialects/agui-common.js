// What both AG-UI transports share: the events' meaning, and a new run's RunAgentInput.

import { randomId } from '../dom.js';

/** A RunAgentInput with one new user message (the gateway keeps the history; ids make it new). */
export function newRunInput(threadId, text) {
  return {
    threadId,
    runId: `run_pg_${randomId(6)}`,
    messages: [{ id: `msg_pg_${randomId(6)}`, role: 'user', content: text }],
    tools: [],
    context: [],
    forwardedProps: {},
  };
}

/**
 * A function from an AG-UI event to view items; it keeps the tool calls' streamed arguments.
 * Over SSE a failed run ends at RUN_ERROR (nothing may follow it); the AGORA profile sends
 * RUN_FINISHED after it, which carries the seq and ends the run.
 */
export function aguiTranslator({ errorEndsRun }) {
  const tools = new Map();
  let failed = false;
  return (f) => {
    switch (f.type) {
      case 'RUN_STARTED':
        failed = false;
        return [{ kind: 'run-start', runId: f.runId }];
      case 'STEP_STARTED':
        return [{ kind: 'step', name: f.stepName }];
      case 'TEXT_MESSAGE_CONTENT':
        return [{ kind: 'text', messageId: f.messageId, delta: f.delta }];
      case 'TEXT_MESSAGE_END':
        return [{ kind: 'text-end', messageId: f.messageId }];
      case 'REASONING_MESSAGE_CONTENT':
        return [{ kind: 'reasoning', messageId: f.messageId, delta: f.delta }];
      case 'TOOL_CALL_START':
        tools.set(f.toolCallId, { name: f.toolCallName, args: '' });
        return [];
      case 'TOOL_CALL_ARGS': {
        const t = tools.get(f.toolCallId);
        if (t) t.args += f.delta;
        return [];
      }
      case 'TOOL_CALL_END': {
        const t = tools.get(f.toolCallId) ?? { name: '?', args: '' };
        return [{ kind: 'tool', toolCallId: f.toolCallId, name: t.name, args: parseArgs(t.args), status: 'started' }];
      }
      case 'TOOL_CALL_RESULT': {
        const t = tools.get(f.toolCallId) ?? { name: '?', args: '' };
        return [{ kind: 'tool', toolCallId: f.toolCallId, name: t.name, args: parseArgs(t.args), status: 'completed', result: f.content }];
      }
      case 'RUN_ERROR':
        failed = true;
        return errorEndsRun ? [{ kind: 'error', code: f.code, message: f.message }, { kind: 'run-end', ok: false }]
          : [{ kind: 'error', code: f.code, message: f.message }];
      case 'RUN_FINISHED': {
        if (failed) return errorEndsRun ? [] : [{ kind: 'run-end', ok: false }];
        const interrupts = f.outcome?.type === 'interrupt' ? f.outcome.interrupts ?? [] : [];
        const approvals = interrupts.map((i) => ({
          kind: 'approval', approvalId: i.id, tool: i.metadata?.toolName ?? i.reason, description: i.message,
          args: i.metadata?.parameters, reasoning: i.metadata?.reasoning, risk: i.metadata?.riskLevel,
        }));
        return [...approvals, { kind: 'run-end', ok: true, interrupted: approvals.length > 0 }];
      }
      default:
        return [];
    }
  };
}

function parseArgs(text) {
  try {
    return text ? JSON.parse(text) : {};
  } catch {
    return text;
  }
}

const CORE = {
  STATE_SNAPSHOT: 'RunStarted',
  STEP_STARTED: 'StepStarted',
  STEP_FINISHED: 'StepFinished',
  TEXT_MESSAGE_START: 'MessageStarted',
  TEXT_MESSAGE_CONTENT: 'TextDelta',
  TEXT_MESSAGE_END: 'MessageCompleted',
  REASONING_MESSAGE_START: 'ReasoningStarted',
  REASONING_MESSAGE_CONTENT: 'ReasoningDelta',
  REASONING_END: 'ReasoningCompleted',
  TOOL_CALL_START: 'ToolCallStarted',
  TOOL_CALL_ARGS: 'ToolCallArgs',
  TOOL_CALL_END: 'ToolCallCompleted',
  TOOL_CALL_RESULT: 'ToolResult',
  STATE_DELTA: 'StateDelta',
  RUN_ERROR: 'RunFailed',
};

/** The core event an AG-UI event carrying a seq shows. */
export function aguiCoreEvent(f) {
  if (f.type === 'CUSTOM') return f.name === 'agora:tool_approval_request' ? 'ApprovalRequested' : 'Custom';
  if (f.type === 'RUN_FINISHED') return f.outcome?.type === 'interrupt' ? 'ApprovalRequested' : 'RunFinished';
  if (f.type === 'RUN_STARTED') return 'RunStarted';
  return CORE[f.type] ?? null;
}
