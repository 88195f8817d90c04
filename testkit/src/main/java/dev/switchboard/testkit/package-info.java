/**
 * What a dialect module's tests need to run without sockets: spec fixtures, an embedded session
 * that keeps every frame it writes, and the malformed-input tables every decoder must refuse.
 */
package dev.switchboard.testkit;
