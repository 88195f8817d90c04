package dev.switchboard.core;

/**
 * The one error code set of the gateway; every adapter maps these to its dialect's codes
 * (design/mapping.md, "Error codes"). {@link #httpStatus()} is the status for HTTP dialects.
 */
public enum ErrorCode {
    INVALID_JSON(400, "the message is not valid JSON"),
    UNKNOWN_TYPE(400, "unknown message type"),
    MISSING_FIELD(422, "a required field is missing"),
    INVALID_FIELD(422, "a field has an invalid value"),
    AUTH_FAILED(401, "authentication failed"),
    FORBIDDEN(403, "not allowed for this principal"),
    NOT_FOUND(404, "no such resource"),
    CONFLICT(409, "already decided"),
    RATE_LIMITED(429, "rate limit exceeded"),
    MODERATION(422, "the message was blocked by moderation"),
    TOOL_FAILED(500, "a tool call failed"),
    UPSTREAM_FAILED(502, "the agent runtime failed"),
    BUSY(409, "a run is already active in this conversation"),
    CANCELLED(499, "the run was cancelled"),
    UNAVAILABLE(503, "the gateway is shutting down"),
    INTERNAL(500, "internal error");

    private final int httpStatus;
    private final String defaultMessage;

    ErrorCode(int httpStatus, String defaultMessage) {
        this.httpStatus = httpStatus;
        this.defaultMessage = defaultMessage;
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
