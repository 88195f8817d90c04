/**
 * The AgentScope Agent API dialect (specs/agentscope-agent-api.md): {@code POST /process} with an
 * {@code AgentRequest} body, answered with the events of one run as server-sent events or as one
 * {@code AgentResponse}, in the wire format of the reference Python runtime
 * ({@code agentscope_runtime.engine.schemas.agent_schemas}).
 */
package dev.switchboard.adapter.agentscope;
