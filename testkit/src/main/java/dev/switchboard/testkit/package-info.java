/**
 * What a plugin module's tests need to run without sockets: spec fixtures, an embedded session
 * that keeps every frame it writes, the malformed-input tables every decoder must refuse, and the
 * contract every conversation store must keep ({@link dev.switchboard.testkit.ConversationStoreContract}).
 */
package dev.switchboard.testkit;
