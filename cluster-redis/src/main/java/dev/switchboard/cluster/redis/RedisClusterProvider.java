package dev.switchboard.cluster.redis;

import dev.switchboard.core.spi.ClusterBus;
import dev.switchboard.core.spi.ClusterProvider;
import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.Settings;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Provides the {@code redis} cluster bus: the Redis that {@code --cluster-redis-url} names, which
 * joins this gateway to the other nodes using it.
 */
public final class RedisClusterProvider implements ClusterProvider {

    @Override
    public String id() {
        return "redis";
    }

    @Override
    public List<OptionSpec> options() {
        return RedisClusterOptions.all();
    }

    @Override
    public boolean configured(Settings settings) {
        return RedisClusterOptions.config(settings).isPresent();
    }

    /**
     * Connects, waiting at most the command timeout; an {@link IllegalStateException} says in one line
     * which Redis could not be reached and why.
     */
    @Override
    public ClusterBus connect(Settings settings) throws InterruptedException {
        RedisClusterConfig config = RedisClusterOptions.config(settings).orElseThrow(() ->
                new IllegalArgumentException("option --" + RedisClusterOptions.URL.name() + " is required: "
                        + RedisClusterOptions.URL_FORM));
        CompletableFuture<RedisClusterBus> connecting = RedisClusterBus.connect(config);
        boolean connected = false;
        try {
            RedisClusterBus bus = connecting.get(config.commandTimeout().toMillis(), TimeUnit.MILLISECONDS);
            connected = true;
            return bus;
        } catch (ExecutionException e) {
            throw unreachable(config, RedisClusterBus.oneLine(e.getCause()));
        } catch (TimeoutException e) {
            throw unreachable(config, "no answer within " + config.commandTimeout().toMillis() + " ms");
        } finally {
            if (!connected) {
                connecting.thenAccept(RedisClusterBus::close);
            }
        }
    }

    private static IllegalStateException unreachable(RedisClusterConfig config, String why) {
        return new IllegalStateException("cannot connect to Redis at " + config.address() + ": " + why);
    }
}
