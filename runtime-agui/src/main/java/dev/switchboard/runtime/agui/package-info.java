/**
 * The {@code agui} runtime: each run is forwarded to an AG-UI agent over HTTP and server-sent
 * events (the transport of {@code @ag-ui/client}'s {@code HttpAgent}), and the agent's events are
 * translated back into the event core, interrupts included.
 */
package dev.switchboard.runtime.agui;
