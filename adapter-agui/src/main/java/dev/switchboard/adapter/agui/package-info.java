/**
 * The AG-UI dialect: the AGORA WebSocket profile (specs/agui-agora-profile.md) and the official
 * AG-UI 1.0 transport, {@code POST /agui} answered with server-sent events.
 */
package dev.switchboard.adapter.agui;
