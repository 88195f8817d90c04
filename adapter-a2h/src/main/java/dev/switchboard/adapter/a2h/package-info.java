/**
 * The A2H side (specs/a2h-protocol.md) in the form of the HumanLayer REST API that the
 * {@code @humanlayer/sdk} and {@code humanlayer} SDKs call: an agent's function calls and contact
 * requests become approvals of the conversation hub, shown to the people connected from any
 * dialect that can answer them, and the hub's pending approvals can be answered over REST.
 */
package dev.switchboard.adapter.a2h;
