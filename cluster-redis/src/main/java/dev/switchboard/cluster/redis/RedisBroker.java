package dev.switchboard.cluster.redis;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The live path between gateway nodes over Redis, after Centrifugo's Redis broker: one atomic script
 * per publish takes the conversation's next seq, appends the event to the conversation's bounded
 * stream under that seq and publishes it on the conversation's channel; an epoch per conversation
 * marks when Redis lost what it held, so a cursor from before is recognised; runs are owned through
 * leases that the publish script checks.
 *
 * <p>One command connection (pipelined: every call is sent at once, answers come in order) and one
 * pub/sub connection per node. Every future completes on a Redis I/O thread: what follows it must not
 * block. Calls fail at once while the connection is down (it reconnects by itself), and after the
 * command timeout when Redis does not answer.
 *
 * <p>Key layout: see {@link RedisKeys}. Redis 6.2 or later.
 */
public final class RedisBroker {
    private static final Logger log = LoggerFactory.getLogger(RedisBroker.class);
    private static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);
    private static final byte[] NONE = new byte[0];
    private static final String[] LEASE_INDEX_KEY = {RedisKeys.LEASE_INDEX};
    private static final Duration RECONNECT_DELAY_MIN = Duration.ofMillis(20);
    private static final Duration RECONNECT_DELAY_MAX = Duration.ofSeconds(1);

    private static final RedisScript PUBLISH = RedisScript.named("publish");
    private static final RedisScript OPEN = RedisScript.named("open");
    private static final RedisScript HISTORY = RedisScript.named("history");
    private static final RedisScript LEASE_RENEW = RedisScript.named("lease-renew");
    private static final RedisScript LEASE_RELEASE = RedisScript.named("lease-release");
    private static final RedisScript LEASE_REMAINING = RedisScript.named("lease-remaining");
    private static final RedisScript LEASE_INDEX = RedisScript.named("lease-index");
    private static final RedisScript LEASE_CLAIM = RedisScript.named("lease-claim");
    private static final RedisScript COUNT_WINDOW = RedisScript.named("count-window");
    private static final List<RedisScript> SCRIPTS = List.of(PUBLISH, OPEN, HISTORY, LEASE_RENEW, LEASE_RELEASE,
            LEASE_REMAINING, LEASE_INDEX, LEASE_CLAIM, COUNT_WINDOW);

    private final RedisBrokerConfig config;
    private final ClientResources resources;
    private final RedisClient client;
    private final RedisAsyncCommands<String, byte[]> redis;
    private final StatefulRedisPubSubConnection<String, byte[]> pubSub;
    private final byte[] streamMax;
    private final byte[] historyTtlSeconds;
    private final SecureRandom random = new SecureRandom();
    /** The channels subscribed to, by name; changed only under {@link #liveLock}, read on the I/O thread. */
    private final Map<String, LiveChannel> live = new ConcurrentHashMap<>();
    private final Object liveLock = new Object();

    private RedisBroker(RedisBrokerConfig config, ClientResources resources, RedisClient client,
                        StatefulRedisConnection<String, byte[]> connection,
                        StatefulRedisPubSubConnection<String, byte[]> pubSub) {
        this.config = config;
        this.resources = resources;
        this.client = client;
        this.redis = connection.async();
        this.pubSub = pubSub;
        this.streamMax = ascii(config.streamMax());
        this.historyTtlSeconds = ascii(config.historyTtl().toSeconds());
        pubSub.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, byte[] message) {
                deliver(channel, message);
            }
        });
    }

    /** Connects to {@code config.url()} and loads the scripts; fails when Redis cannot be reached. */
    public static CompletableFuture<RedisBroker> connect(RedisBrokerConfig config) {
        ClientResources resources = DefaultClientResources.builder()
                .reconnectDelay(Delay.exponential(RECONNECT_DELAY_MIN, RECONNECT_DELAY_MAX, 2, TimeUnit.MILLISECONDS))
                .build();
        RedisClient client = RedisClient.create(resources);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(config.commandTimeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(config.commandTimeout()).build())
                .build());
        RedisURI uri = RedisURI.create(config.url());
        uri.setTimeout(config.commandTimeout());
        var commands = client.connectAsync(CODEC, uri).toCompletableFuture();
        var pubSub = client.connectPubSubAsync(CODEC, uri).toCompletableFuture();
        return commands.thenCombine(pubSub, (c, p) -> new RedisBroker(config, resources, client, c, p))
                .thenCompose(RedisBroker::loadScripts)
                .whenComplete((broker, e) -> {
                    if (e != null) {
                        shutdown(client, resources);
                    } else {
                        log.info("Connected to Redis at {} as node {}", uri.getHost() + ":" + uri.getPort(),
                                config.nodeId());
                    }
                });
    }

    private CompletableFuture<RedisBroker> loadScripts() {
        return CompletableFuture.allOf(SCRIPTS.stream()
                        .map(s -> redis.scriptLoad(s.source).toCompletableFuture())
                        .toArray(CompletableFuture[]::new))
                .thenApply(v -> this);
    }

    public RedisBrokerConfig config() {
        return config;
    }

    /**
     * The conversation's position, opening its live history if Redis holds none: a new epoch whose
     * seqs go on after {@code floorSeq}, the top seq of the durable store. Kept as it is when open.
     */
    public CompletableFuture<RedisPosition> open(String conversationId, long floorSeq) {
        return OPEN.<List<Object>>run(redis, ScriptOutputType.MULTI, historyKeys(conversationId),
                        ascii(HexFormat.of().formatHex(randomBytes(8))), ascii(floorSeq), historyTtlSeconds)
                .thenApply(reply -> new RedisPosition(text(reply.get(0)), (Long) reply.get(1)));
    }

    /**
     * Gives {@code payload} the conversation's next seq, stores it in the stream and publishes it to
     * the conversation's subscribers on every node, in one step. Refused, and not stored, when
     * {@code leaseToken} (null: none checked) no longer holds the conversation's run, when
     * {@code epoch} (null: any) is not the conversation's, or when the conversation is not open.
     */
    public CompletableFuture<RedisPublished> publish(String conversationId, String epoch, String leaseToken,
                                                     byte[] payload) {
        return PUBLISH.<List<Object>>run(redis, ScriptOutputType.MULTI, RedisKeys.conversation(conversationId),
                        utf8(epoch), utf8(leaseToken), payload, streamMax, historyTtlSeconds,
                        utf8(RedisKeys.channel(conversationId)))
                .thenApply(RedisBroker::published);
    }

    private static RedisPublished published(List<Object> reply) {
        long code = (Long) reply.get(0);
        if (code == 0) {
            return new RedisPublished(RedisPublished.Status.PUBLISHED, (Long) reply.get(1), text(reply.get(2)));
        } else if (code == 1) {
            return new RedisPublished(RedisPublished.Status.LEASE_LOST, 0, null);
        } else if (code == 2) {
            return new RedisPublished(RedisPublished.Status.EPOCH_CHANGED, 0, text(reply.get(1)));
        } else if (code == 3) {
            return new RedisPublished(RedisPublished.Status.NOT_OPEN, 0, null);
        }
        throw new IllegalStateException("the publish script answered " + reply);
    }

    /**
     * At most {@code limit} entries of the conversation's stream after {@code afterSeq}, and whether
     * they continue that cursor of {@code epoch} (null: any) without a gap.
     */
    public CompletableFuture<RedisHistory> history(String conversationId, String epoch, long afterSeq, int limit) {
        if (afterSeq < 0 || limit < 1) {
            throw new IllegalArgumentException("afterSeq is " + afterSeq + " and limit " + limit
                    + " but they must be at least 0 and 1");
        }
        return HISTORY.<List<Object>>run(redis, ScriptOutputType.MULTI, historyKeys(conversationId),
                        ascii(afterSeq + 1), ascii(limit))
                .thenApply(reply -> history(reply, epoch, afterSeq));
    }

    private static RedisHistory history(List<Object> reply, String cursorEpoch, long afterSeq) {
        if (reply.isEmpty()) {
            return new RedisHistory(RedisHistory.Status.NOT_OPEN, null, 0, 0, List.of());
        }
        String epoch = text(reply.get(0));
        long top = (Long) reply.get(1);
        long oldest = (Long) reply.get(2);
        if (cursorEpoch != null && !cursorEpoch.equals(epoch)) {
            return new RedisHistory(RedisHistory.Status.EPOCH_CHANGED, epoch, top, oldest, List.of());
        }
        if (afterSeq > top) {
            return new RedisHistory(RedisHistory.Status.AHEAD, epoch, top, oldest, List.of());
        }
        List<RedisEntry> entries = new ArrayList<>((reply.size() - 3) / 2);
        for (int i = 3; i < reply.size(); i += 2) {
            entries.add(new RedisEntry((Long) reply.get(i), (byte[]) reply.get(i + 1)));
        }
        boolean gap = afterSeq < top && (oldest == 0 || afterSeq + 1 < oldest);
        return new RedisHistory(gap ? RedisHistory.Status.TRUNCATED : RedisHistory.Status.CONTINUOUS, epoch, top,
                oldest, entries);
    }

    /**
     * Delivers every event published to the conversation from now on to {@code listener}, on the
     * pub/sub I/O thread, in seq order; it must not block. The node subscribes to the conversation's
     * channel while it has at least one listener there. Completes once Redis has confirmed the
     * subscription, so that a history read after it misses nothing in between.
     *
     * <p>Events published while the connection is down are not delivered after it comes back: a
     * listener finds them by the gap in seqs and reads them with {@link #history}.
     */
    public CompletableFuture<Void> subscribe(String conversationId, Consumer<RedisLiveMessage> listener) {
        Objects.requireNonNull(listener, "listener");
        String channel = RedisKeys.channel(conversationId);
        synchronized (liveLock) {
            LiveChannel subscribed = live.get(channel);
            if (subscribed == null) {
                LiveChannel added = new LiveChannel(conversationId,
                        pubSub.async().subscribe(channel).toCompletableFuture());
                live.put(channel, added);
                added.confirmed.whenComplete((v, e) -> {
                    if (e != null) {
                        synchronized (liveLock) {
                            live.remove(channel, added);
                        }
                    }
                });
                subscribed = added;
            }
            subscribed.listeners.add(listener);
            return subscribed.confirmed.copy();
        }
    }

    /** Stops delivering to {@code listener}; the node leaves the channel with its last listener. */
    public CompletableFuture<Void> unsubscribe(String conversationId, Consumer<RedisLiveMessage> listener) {
        String channel = RedisKeys.channel(conversationId);
        synchronized (liveLock) {
            LiveChannel subscribed = live.get(channel);
            if (subscribed == null || !subscribed.listeners.remove(listener) || !subscribed.listeners.isEmpty()) {
                return CompletableFuture.completedFuture(null);
            }
            live.remove(channel);
            return pubSub.async().unsubscribe(channel).toCompletableFuture();
        }
    }

    private void deliver(String channel, byte[] message) {
        LiveChannel subscribed = live.get(channel);
        if (subscribed == null) {
            return;
        }
        RedisLiveMessage parsed = parse(subscribed.conversationId, message);
        if (parsed == null) {
            log.warn("Ignored a message on {} that is not seq:epoch:payload", channel);
            return;
        }
        for (Consumer<RedisLiveMessage> listener : subscribed.listeners) {
            try {
                listener.accept(parsed);
            } catch (RuntimeException e) {
                log.warn("A live listener of conversation {} failed", subscribed.conversationId, e);
            }
        }
    }

    /** Reads what the publish script sends: the seq, {@code :}, the epoch, {@code :}, the payload. */
    static RedisLiveMessage parse(String conversationId, byte[] message) {
        long seq = 0;
        int i = 0;
        for (; i < message.length && message[i] != ':'; i++) {
            int digit = message[i] - '0';
            if (digit < 0 || digit > 9 || i > 18) {
                return null;
            }
            seq = seq * 10 + digit;
        }
        int epochEnd = i + 1;
        while (epochEnd < message.length && message[epochEnd] != ':') {
            epochEnd++;
        }
        if (i == 0 || epochEnd >= message.length) {
            return null;
        }
        return new RedisLiveMessage(conversationId,
                new String(message, i + 1, epochEnd - i - 1, StandardCharsets.US_ASCII), seq,
                Arrays.copyOfRange(message, epochEnd + 1, message.length));
    }

    /**
     * Makes {@code nodeId} the owner of the conversation's run for {@code ttl}, unless a lease holds
     * it: then empty. The lease is also entered in the index that {@link #claimExpiredLeases} reads.
     */
    public CompletableFuture<Optional<RedisLease>> acquireLease(String conversationId, String nodeId, Duration ttl) {
        if (nodeId.isEmpty() || nodeId.indexOf('\n') >= 0) {
            throw new IllegalArgumentException("node id '" + nodeId + "' must be one line of text");
        }
        RedisLease lease = new RedisLease(conversationId, nodeId,
                HexFormat.of().formatHex(randomBytes(16)) + "@" + nodeId);
        return redis.set(RedisKeys.lease(conversationId), utf8(lease.token()), SetArgs.Builder.nx().px(ttl))
                .toCompletableFuture()
                .thenCompose(ok -> ok == null ? CompletableFuture.completedFuture(Optional.<RedisLease>empty())
                        : index(lease, ttl.toMillis()).thenApply(v -> Optional.of(lease)));
    }

    /** Extends the lease to {@code ttl} from now; false when it is no longer held (publish is refused too). */
    public CompletableFuture<Boolean> renewLease(RedisLease lease, Duration ttl) {
        return LEASE_RENEW.<Long>run(redis, ScriptOutputType.INTEGER, leaseKey(lease), utf8(lease.token()),
                        ascii(ttl.toMillis()))
                .thenCompose(renewed -> renewed == 0 ? CompletableFuture.completedFuture(false)
                        : index(lease, ttl.toMillis()).thenApply(v -> true));
    }

    /** Ends the lease if it still holds the run; false when it no longer did. Either way no reaper gets it. */
    public CompletableFuture<Boolean> releaseLease(RedisLease lease) {
        return LEASE_RELEASE.<Long>run(redis, ScriptOutputType.INTEGER, leaseKey(lease), utf8(lease.token()))
                .thenCompose(released -> redis.zrem(RedisKeys.LEASE_INDEX, utf8(lease.indexMember()))
                        .thenApply(removed -> released == 1));
    }

    /**
     * Up to {@code limit} leases whose holders let them end without renewal or release: the runs of
     * a node that died or lost Redis. Each such lease is answered to one caller only, across nodes,
     * so one reaper fails its run. A lease found still held (renewed while the index lagged) stays
     * indexed and is not answered.
     */
    public CompletableFuture<List<RedisLease>> claimExpiredLeases(int limit) {
        return LEASE_CLAIM.<List<Object>>run(redis, ScriptOutputType.MULTI, LEASE_INDEX_KEY, ascii(limit))
                .thenCompose(members -> {
                    List<CompletableFuture<RedisLease>> checks = members.stream()
                            .map(m -> expiredOrReindexed(RedisLease.fromIndexMember(text(m))))
                            .toList();
                    return CompletableFuture.allOf(checks.toArray(CompletableFuture[]::new))
                            .thenApply(v -> checks.stream().map(CompletableFuture::join).filter(Objects::nonNull)
                                    .toList());
                });
    }

    private CompletableFuture<RedisLease> expiredOrReindexed(RedisLease lease) {
        return LEASE_REMAINING.<Long>run(redis, ScriptOutputType.INTEGER, leaseKey(lease), utf8(lease.token()))
                .thenCompose(remainingMs -> remainingMs < 0 ? CompletableFuture.completedFuture(lease)
                        : index(lease, remainingMs).thenApply(v -> null));
    }

    private CompletableFuture<Long> index(RedisLease lease, long ttlMs) {
        return LEASE_INDEX.run(redis, ScriptOutputType.INTEGER, LEASE_INDEX_KEY, utf8(lease.indexMember()),
                ascii(ttlMs));
    }

    /**
     * Counts one more under {@code key} across the cluster, in a fixed window of {@code window} that
     * starts with the window's first count; answers the count so far, this one included.
     */
    public CompletableFuture<Long> incrementWindow(String key, Duration window) {
        return COUNT_WINDOW.run(redis, ScriptOutputType.INTEGER, new String[] {RedisKeys.counter(key)},
                ascii(window.toMillis()));
    }

    /** Whether Redis answers {@code PING} within {@code timeout}; never fails. */
    public CompletableFuture<RedisHealth> health(Duration timeout) {
        long start = System.nanoTime();
        return redis.ping().toCompletableFuture()
                .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .handle((pong, e) -> {
                    long micros = (System.nanoTime() - start) / 1_000;
                    if (e == null) {
                        return new RedisHealth(true, micros, null);
                    }
                    Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
                    return new RedisHealth(false, micros, cause.getClass().getSimpleName()
                            + (cause.getMessage() == null ? "" : ": " + cause.getMessage()));
                });
    }

    /** Closes both connections and the I/O threads. */
    public CompletableFuture<Void> close() {
        synchronized (liveLock) {
            live.clear();
        }
        return shutdown(client, resources);
    }

    private static CompletableFuture<Void> shutdown(RedisClient client, ClientResources resources) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        client.shutdownAsync(0, 2, TimeUnit.SECONDS).whenComplete((v, e) ->
                resources.shutdown(0, 2, TimeUnit.SECONDS).addListener(f -> done.complete(null)));
        return done;
    }

    private static String[] historyKeys(String conversationId) {
        return new String[] {RedisKeys.meta(conversationId), RedisKeys.stream(conversationId)};
    }

    private static String[] leaseKey(RedisLease lease) {
        return new String[] {RedisKeys.lease(lease.conversationId())};
    }

    private byte[] randomBytes(int n) {
        byte[] bytes = new byte[n];
        random.nextBytes(bytes);
        return bytes;
    }

    private static byte[] ascii(long n) {
        return ascii(Long.toString(n));
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] utf8(String s) {
        return s == null ? NONE : s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Object bulk) {
        return new String((byte[]) bulk, StandardCharsets.UTF_8);
    }

    /** One subscribed channel: its conversation, its listeners on this node, Redis's confirmation. */
    private static final class LiveChannel {
        final String conversationId;
        final CompletableFuture<Void> confirmed;
        final List<Consumer<RedisLiveMessage>> listeners = new CopyOnWriteArrayList<>();

        LiveChannel(String conversationId, CompletableFuture<Void> confirmed) {
            this.conversationId = conversationId;
            this.confirmed = confirmed;
        }
    }
}
