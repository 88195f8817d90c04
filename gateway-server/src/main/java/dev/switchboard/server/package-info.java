/** The Netty server, configuration and the embedded defaults of Switchboard. */
package dev.switchboard.server;
