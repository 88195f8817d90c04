package dev.switchboard.core;

/**
 * The one error code set of the gateway; every adapter maps these to its dialect's codes
 * (design/mapping.md, "Error codes"). {@link #httpStatus()} is the status for HTTP dialects.
 */
public enum ErrorCode {
    INVALID_JSON(400, "invalid_json", "the message is not valid JSON"),
    UNKNOWN_TYPE(400, "unknown_message_type", "unknown message type"),
    MISSING_FIELD(422, "validation_error", "a required field is missing"),
    INVALID_FIELD(422, "validation_error", "a field has an invalid value"),
    AUTH_FAILED(401, "auth_failed", "authentication failed"),
    FORBIDDEN(403, "forbidden", "not allowed for this principal"),
    NOT_FOUND(404, "not_found", "no such resource"),
    CONFLICT(409, "already_decided", "already decided"),
    RATE_LIMITED(429, "rate_limit_exceeded", "rate limit exceeded"),
    MODERATION(422, "moderation_violation", "the message was blocked by moderation"),
    TOOL_FAILED(500, "tool_execution_failed", "a tool call failed"),
    UPSTREAM_FAILED(502, "upstream_error", "the agent runtime failed"),
    BUSY(409, "run_in_progress", "a run is already active in this conversation"),
    CANCELLED(499, "cancelled", "the run was cancelled"),
    UNAVAILABLE(503, "unavailable", "the gateway is shutting down"),
    INTERNAL(500, "internal_error", "internal error");

    private final int httpStatus;
    private final String wireCode;
    private final String defaultMessage;

    ErrorCode(int httpStatus, String wireCode, String defaultMessage) {
        this.httpStatus = httpStatus;
        this.wireCode = wireCode;
        this.defaultMessage = defaultMessage;
    }

    /**
     * The snake_case code the JSON dialects share (AG-UI {@code RUN_ERROR.code} and
     * {@code agora:error} {@code errorCode}, AgentScope {@code error.code}, HTTP error bodies).
     * Dialects with codes of their own (HAI, VoiceAssist) map the constant themselves.
     */
    public String wireCode() {
        return wireCode;
    }

    public int httpStatus() {
        return httpStatus;
    }

    public String defaultMessage() {
        return defaultMessage;
    }

    /** True when the peer caused the error (its input, its rights), as opposed to the gateway or the agent. */
    public boolean peerFault() {
        return httpStatus >= 400 && httpStatus < 500 && this != CANCELLED;
    }
}
