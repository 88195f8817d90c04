package dev.switchboard.adapter.hai;

import dev.switchboard.core.ErrorCode;

/** The HAI {@code error_code} for each gateway error code (design/mapping.md, "Error codes"). */
final class HaiErrorCodes {

    private HaiErrorCodes() {
    }

    static String of(ErrorCode code) {
        return switch (code) {
            case INVALID_JSON -> "invalid_json";
            case UNKNOWN_TYPE -> "unknown_message_type";
            case MISSING_FIELD, INVALID_FIELD, NOT_FOUND, CONFLICT -> "validation_error";
            case AUTH_FAILED -> "auth_failed";
            case FORBIDDEN -> "invalid_session";
            case RATE_LIMITED -> "rate_limit_exceeded";
            case MODERATION -> "moderation_violation";
            case TOOL_FAILED -> "tool_execution_failed";
            case UPSTREAM_FAILED -> "upstream_error";
            case BUSY -> "run_in_progress";
            case CANCELLED -> "run_cancelled";
            case UNAVAILABLE -> "service_unavailable";
            case INTERNAL -> "internal_error";
        };
    }
}
