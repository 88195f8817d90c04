// Plain words for the error codes the dialects send.

const EXPLAIN = {
  auth_failed: 'The gateway refused the token: see the authentication box above.',
  AUTH_FAILED: 'The token was refused, or the conversation belongs to another principal.',
  forbidden: 'The conversation (or the approval) belongs to another principal than the token\'s.',
  invalid_session: 'The conversation belongs to another principal, or this connection has not joined it.',
  run_in_progress: 'A run is already going on in this conversation (or waits for an approval): wait for it, or answer the approval.',
  QUERY_PROCESSING_ERROR: 'The message could not be processed: blocked words, a run already going on, or the agent failed.',
  rate_limit_exceeded: 'Too many runs a minute from this client (--rate-limit-runs-per-minute).',
  QUOTA_EXCEEDED: 'Too many runs a minute from this client (--rate-limit-runs-per-minute).',
  moderation_violation: 'The message holds a blocked word; no run started.',
  validation_error: 'A field is missing or wrong; the message says which.',
  already_decided: 'Someone decided this approval first; the first decision stands.',
  internal_error: 'The agent or the gateway failed during the run (the demo agent does this on purpose for "crash").',
  INTERNAL_ERROR: 'The agent or the gateway failed during the run (the demo agent does this on purpose for "crash").',
  upstream_error: 'The agent runtime\'s upstream (a model server, an AG-UI agent) failed.',
  service_unavailable: 'The gateway is stopping, or the run was cut off by a restart.',
  unavailable: 'The gateway is stopping, or the run was cut off by a restart.',
  not_found: 'Unknown approval, or a conversation that does not exist yet.',
  not_connected: 'The connection is closed: resume it in the resume lab, or reopen the conversation.',
  network: 'The browser could not reach the gateway.',
};

export function explainError(code, status) {
  if (EXPLAIN[code]) return EXPLAIN[code];
  if (status === 401) return EXPLAIN.auth_failed;
  return '';
}
