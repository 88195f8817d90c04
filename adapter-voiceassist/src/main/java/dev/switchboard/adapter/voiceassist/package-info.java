/** The VoiceAssist dialect (specs/voiceassist-protocol.md). */
package dev.switchboard.adapter.voiceassist;
