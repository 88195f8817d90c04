/** The HAI dialect (specs/hai-protocol.md). */
package dev.switchboard.adapter.hai;
