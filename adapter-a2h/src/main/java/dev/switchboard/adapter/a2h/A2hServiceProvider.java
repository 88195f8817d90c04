package dev.switchboard.adapter.a2h;

import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.RestService;
import dev.switchboard.core.spi.RestServiceProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;

/** Entry point of the A2H REST side, found with {@link java.util.ServiceLoader}; its id is {@code a2h}. */
public final class A2hServiceProvider implements RestServiceProvider {
    private static final Logger log = LoggerFactory.getLogger(A2hServiceProvider.class);

    /** The repeatable option of the keys agents present. */
    static final String API_KEY_OPTION = "a2h-api-key";

    @Override
    public String id() {
        return "a2h";
    }

    @Override
    public List<OptionSpec> options() {
        return List.of(OptionSpec.list(API_KEY_OPTION, "API key agents present to the A2H REST endpoints "
                + "(repeatable); without one only loopback callers are served").alsoFromEnv("SWITCHBOARD_A2H_API_KEYS"));
    }

    @Override
    public RestService create(Context context) {
        List<String> keys = context.settings().getAll(API_KEY_OPTION).stream().map(String::strip)
                .filter(k -> !k.isEmpty()).toList();
        if (keys.isEmpty()) {
            log.warn("no --{} is configured: the A2H endpoints ({} and {}) serve only loopback callers",
                    API_KEY_OPTION, A2hService.HUMANLAYER_PREFIX, A2hService.A2H_PREFIX);
        }
        A2hHumans humans = new A2hHumans(context.store());
        A2hCalls calls = new A2hCalls(context.approvals(), context.store(), humans, System::currentTimeMillis);
        return new A2hService(keys, calls, humans);
    }
}
