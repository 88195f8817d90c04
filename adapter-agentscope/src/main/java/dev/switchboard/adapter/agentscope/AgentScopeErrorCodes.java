package dev.switchboard.adapter.agentscope;

import dev.switchboard.core.ErrorCode;

/**
 * The AgentScope {@code error.code} for each gateway error code (design/mapping.md, "Error codes");
 * the reference runtime defines no code set of its own, only {@code Error{code, message}}.
 */
final class AgentScopeErrorCodes {

    private AgentScopeErrorCodes() {
    }

    static String of(ErrorCode code) {
        return switch (code) {
            case INVALID_JSON -> "invalid_json";
            case UNKNOWN_TYPE -> "unknown_message_type";
            case MISSING_FIELD, INVALID_FIELD -> "validation_error";
            case AUTH_FAILED -> "auth_failed";
            case FORBIDDEN -> "forbidden";
            case NOT_FOUND -> "not_found";
            case CONFLICT -> "already_decided";
            case RATE_LIMITED -> "rate_limit_exceeded";
            case MODERATION -> "moderation_violation";
            case TOOL_FAILED -> "tool_execution_failed";
            case UPSTREAM_FAILED -> "upstream_error";
            case BUSY -> "run_in_progress";
            case CANCELLED -> "cancelled";
            case UNAVAILABLE -> "unavailable";
            case INTERNAL -> "internal_error";
        };
    }
}
