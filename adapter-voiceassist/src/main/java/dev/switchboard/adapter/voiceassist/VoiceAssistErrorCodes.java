package dev.switchboard.adapter.voiceassist;

import dev.switchboard.core.ErrorCode;

/**
 * The VoiceAssist {@code error.code} for each gateway error code (design/mapping.md, "Error codes";
 * spec "Message Type: error").
 */
final class VoiceAssistErrorCodes {

    private VoiceAssistErrorCodes() {
    }

    static String of(ErrorCode code) {
        return switch (code) {
            case INVALID_JSON -> "INVALID_MESSAGE_FORMAT";
            case UNKNOWN_TYPE -> "UNKNOWN_MESSAGE_TYPE";
            case MISSING_FIELD -> "MISSING_REQUIRED_FIELD";
            // The spec keeps MISSING_REQUIRED_FIELD for a field that is absent; one that is present
            // but wrong is a message to "fix format and resend".
            case INVALID_FIELD -> "INVALID_MESSAGE_FORMAT";
            case AUTH_FAILED, FORBIDDEN -> "AUTH_FAILED";
            case RATE_LIMITED -> "QUOTA_EXCEEDED";
            case MODERATION, TOOL_FAILED, UPSTREAM_FAILED, BUSY, NOT_FOUND, CONFLICT, CANCELLED ->
                    "QUERY_PROCESSING_ERROR";
            case UNAVAILABLE, INTERNAL -> "INTERNAL_ERROR";
        };
    }
}
