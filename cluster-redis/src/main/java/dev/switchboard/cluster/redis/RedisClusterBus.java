package dev.switchboard.cluster.redis;

import dev.switchboard.core.LogContext;
import dev.switchboard.core.spi.ClusterBus;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The cluster bus over Redis, after Centrifugo's Redis broker: one atomic script per publish checks
 * the writer's lease and that its seq rises, appends the event to the conversation's bounded stream
 * under that seq with the seq before it, and publishes it on the conversation's channel. The
 * conversation's meta hash keeps its top seq and the seq at which its last writer released, so the
 * next writer learns whether it may go on at once.
 *
 * <p>Three connections per node, each pipelined (every call is sent at once, answers come in order):
 * one for publishes, history and the rest, one for pub/sub, and one for write leases and the node's
 * presence on an I/O thread of its own, so that a lease's renewal never waits behind a busy node's
 * publishes and history reads (a renewal answered late makes its writer stop). Calls fail at once
 * while a connection is down (it reconnects by itself), and after the command timeout when Redis
 * does not answer.
 *
 * <p>Key layout: see {@link RedisKeys}. Redis 6.2 or later.
 */
public final class RedisClusterBus implements ClusterBus {
    private static final Logger log = LoggerFactory.getLogger(RedisClusterBus.class);
    private static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE);
    private static final String[] LEASE_INDEX_KEY = {RedisKeys.LEASE_INDEX};
    private static final byte[] ONE = {'1'};
    private static final Duration RECONNECT_DELAY_MIN = Duration.ofMillis(20);
    private static final Duration RECONNECT_DELAY_MAX = Duration.ofSeconds(1);

    private static final RedisScript PUBLISH = RedisScript.named("publish");
    private static final RedisScript HISTORY = RedisScript.named("history");
    private static final RedisScript LEASE_ACQUIRE = RedisScript.named("lease-acquire");
    private static final RedisScript LEASE_RENEW = RedisScript.named("lease-renew");
    private static final RedisScript LEASE_RELEASE = RedisScript.named("lease-release");
    private static final RedisScript FENCE_RAISE = RedisScript.named("fence-raise");
    private static final RedisScript LEASE_INDEX = RedisScript.named("lease-index");
    private static final RedisScript LEASE_CLAIM = RedisScript.named("lease-claim");
    private static final RedisScript COUNT_WINDOW = RedisScript.named("count-window");
    private static final RedisScript PRESENCE = RedisScript.named("presence");
    private static final RedisScript PLACE_TAKE = RedisScript.named("place-take");
    private static final RedisScript PLACE_GIVE = RedisScript.named("place-give");
    /** How long a key's places outlive their last taking. */
    private static final Duration PLACES_TTL = Duration.ofDays(1);
    private static final List<RedisScript> SCRIPTS = List.of(PUBLISH, HISTORY, LEASE_ACQUIRE, LEASE_RENEW,
            LEASE_RELEASE, LEASE_INDEX, LEASE_CLAIM, COUNT_WINDOW,
            PRESENCE, PLACE_TAKE, PLACE_GIVE);
    private static final Published[] PUBLISH_ANSWERS = {Published.PUBLISHED, Published.LEASE_LOST, Published.STALE};

    private final RedisClusterConfig config;
    private final ClientResources resources;
    private final RedisClient client;
    private final RedisAsyncCommands<String, byte[]> redis;
    /** Write leases and presence: a connection and an I/O thread of their own. */
    private final ClientResources leaseResources;
    private final RedisClient leaseClient;
    private final RedisAsyncCommands<String, byte[]> leases;
    private final StatefulRedisPubSubConnection<String, byte[]> pubSub;
    private final String nodeChannel;
    private final byte[] streamMax;
    private final byte[] historyTtlSeconds;
    private final SecureRandom random = new SecureRandom();
    /** The last publish of each lease still waiting for its answer, by token: a release waits for it. */
    private final Map<String, CompletableFuture<Published>> unanswered = new ConcurrentHashMap<>();
    /** The channels subscribed to, by name; changed only under {@link #liveLock}, read on the I/O thread. */
    private final Map<String, LiveChannel> live = new ConcurrentHashMap<>();
    private final Object liveLock = new Object();
    /** Messages the pub/sub connection delivered, and when the last one came: to explain a slow subscription. */
    private final AtomicLong delivered = new AtomicLong();
    private volatile long lastDelivered = System.nanoTime();
    /** When each subscription that timed out was asked for, until Redis confirms it (if it ever does). */
    private final Map<String, Long> unconfirmed = new ConcurrentHashMap<>();
    /** The nodes whose presence had lapsed at the last renewal of this node's presence. */
    private volatile List<byte[]> gone = List.of();
    private volatile Consumer<byte[]> nodeListener;

    private RedisClusterBus(RedisClusterConfig config, ClientResources resources, RedisClient client,
                            StatefulRedisConnection<String, byte[]> connection,
                            StatefulRedisPubSubConnection<String, byte[]> pubSub, ClientResources leaseResources,
                            RedisClient leaseClient, StatefulRedisConnection<String, byte[]> leaseConnection) {
        this.config = config;
        this.resources = resources;
        this.client = client;
        this.redis = connection.async();
        this.leaseResources = leaseResources;
        this.leaseClient = leaseClient;
        this.leases = leaseConnection.async();
        this.pubSub = pubSub;
        this.nodeChannel = RedisKeys.node(config.nodeId());
        this.streamMax = ascii(config.streamMax());
        this.historyTtlSeconds = ascii(config.historyTtl().toSeconds());
        pubSub.addListener(new RedisPubSubAdapter<>() {
            @Override
            public void message(String channel, byte[] message) {
                deliver(channel, message);
            }

            @Override
            public void subscribed(String channel, long count) {
                Long asked = unconfirmed.remove(channel);
                if (asked != null) {
                    log.warn("Redis confirmed the subscription to {} {} ms after it was asked, past the"
                            + " command timeout", channel, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked));
                }
            }
        });
    }

    /** Connects to {@code config.url()} and loads the scripts; fails when Redis cannot be reached. */
    public static CompletableFuture<RedisClusterBus> connect(RedisClusterConfig config) {
        ClientResources resources = DefaultClientResources.builder()
                .reconnectDelay(Delay.exponential(RECONNECT_DELAY_MIN, RECONNECT_DELAY_MAX, 2, TimeUnit.MILLISECONDS))
                .build();
        ClientResources leaseResources = DefaultClientResources.builder()
                .ioThreadPoolSize(1)
                .computationThreadPoolSize(1)
                .reconnectDelay(Delay.exponential(RECONNECT_DELAY_MIN, RECONNECT_DELAY_MAX, 2, TimeUnit.MILLISECONDS))
                .build();
        RedisClient client = client(config, resources);
        RedisClient leaseClient = client(config, leaseResources);
        RedisURI uri = RedisURI.create(config.url());
        uri.setTimeout(config.commandTimeout());
        var commands = client.connectAsync(CODEC, uri).toCompletableFuture();
        var pubSub = client.connectPubSubAsync(CODEC, uri).toCompletableFuture();
        var leases = leaseClient.connectAsync(CODEC, uri).toCompletableFuture();
        return CompletableFuture.allOf(commands, pubSub, leases)
                .thenApply(v -> new RedisClusterBus(config, resources, client, commands.join(), pubSub.join(),
                        leaseResources, leaseClient, leases.join()))
                .thenCompose(RedisClusterBus::loadScripts)
                .thenCompose(RedisClusterBus::startPresence)
                .whenComplete((bus, e) -> {
                    if (e != null) {
                        shutdown(client, resources);
                        shutdown(leaseClient, leaseResources);
                    } else {
                        log.info("Connected to Redis at {} as node {}", config.address(), config.nodeId());
                    }
                });
    }

    private static RedisClient client(RedisClusterConfig config, ClientResources resources) {
        RedisClient client = RedisClient.create(resources);
        client.setOptions(ClientOptions.builder()
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .timeoutOptions(TimeoutOptions.enabled(config.commandTimeout()))
                .socketOptions(SocketOptions.builder().connectTimeout(config.commandTimeout()).build())
                .build());
        return client;
    }

    private CompletableFuture<RedisClusterBus> loadScripts() {
        return CompletableFuture.allOf(SCRIPTS.stream()
                        .map(s -> redis.scriptLoad(s.source).toCompletableFuture())
                        .toArray(CompletableFuture[]::new))
                .thenApply(v -> this);
    }

    /**
     * Renews this node's presence now and every third of the lease time from now on, and keeps the
     * nodes whose presence lapsed for {@link #takePlace}: a node that has not renewed its presence
     * for three lease times stopped, and holds no place any more.
     */
    private CompletableFuture<RedisClusterBus> startPresence() {
        long every = Math.max(100, config.leaseTtl().toMillis() / 3);
        leaseResources.eventExecutorGroup().scheduleWithFixedDelay(() -> renewPresence().exceptionally(e -> {
            log.debug("could not renew the presence of node {}: {}", config.nodeId(), oneLine(e));
            return null;
        }), every, every, TimeUnit.MILLISECONDS);
        return renewPresence().thenApply(v -> this);
    }

    private CompletableFuture<Void> renewPresence() {
        return PRESENCE.<List<Object>>run(leases, ScriptOutputType.MULTI, new String[] {RedisKeys.NODES},
                        utf8(config.nodeId()), ascii(config.leaseTtl().toMillis() * 3))
                .thenAccept(nodes -> {
                    List<byte[]> names = new ArrayList<>(nodes.size());
                    for (Object n : nodes) {
                        names.add((byte[]) n);
                    }
                    gone = List.copyOf(names);
                });
    }

    @Override
    public CompletableFuture<Boolean> takePlace(String key, int limit) {
        List<byte[]> lapsed = gone;
        byte[][] args = new byte[3 + lapsed.size()][];
        args[0] = utf8(config.nodeId());
        args[1] = ascii(limit);
        args[2] = ascii(PLACES_TTL.toMillis());
        for (int i = 0; i < lapsed.size(); i++) {
            args[3 + i] = lapsed.get(i);
        }
        return PLACE_TAKE.<Long>run(redis, ScriptOutputType.INTEGER, new String[] {RedisKeys.places(key)}, args)
                .thenApply(taken -> taken == 1);
    }

    @Override
    public CompletableFuture<Void> givePlace(String key) {
        return PLACE_GIVE.<Long>run(redis, ScriptOutputType.INTEGER, new String[] {RedisKeys.places(key)},
                        utf8(config.nodeId()))
                .thenApply(v -> null);
    }

    @Override
    public String nodeId() {
        return config.nodeId();
    }

    @Override
    public Duration leaseTtl() {
        return config.leaseTtl();
    }

    /**
     * {@inheritDoc} The lease is also entered in the index that {@link #takeExpired} reads, in the
     * same round trip: the entry goes with the acquisition, and is taken out again when the lease was
     * not acquired (a reaper that read it meanwhile finds another token holding the lease, or none,
     * and its take-over acquires nothing or a lease nobody holds).
     */
    @Override
    public CompletableFuture<Optional<Lease>> acquire(String conversationId) {
        return acquire(conversationId, null).thenApply(reply -> Optional.ofNullable(reply.lease()));
    }

    /**
     * Acquires the conversation's lease, indexed; {@code lapsedToken} (may be null) is the token of a
     * lease a reaper claimed, whose time left the reply has when it still holds.
     */
    private CompletableFuture<Acquired> acquire(String conversationId, String lapsedToken) {
        String token = HexFormat.of().formatHex(randomBytes(16)) + "@" + config.nodeId();
        String member = RedisKeys.leaseIndexMember(conversationId, token);
        byte[][] args = lapsedToken == null
                ? new byte[][] {utf8(token), ascii(config.leaseTtl().toMillis()), historyTtlSeconds}
                : new byte[][] {utf8(token), ascii(config.leaseTtl().toMillis()), historyTtlSeconds, utf8(lapsedToken)};
        CompletableFuture<List<Object>> acquired = LEASE_ACQUIRE.run(leases, ScriptOutputType.MULTI,
                RedisKeys.leaseAndMeta(conversationId), args);
        CompletableFuture<Long> indexed = LEASE_INDEX.run(leases, ScriptOutputType.INTEGER, LEASE_INDEX_KEY,
                utf8(member), ascii(config.leaseTtl().toMillis()));
        return acquired.thenCompose(reply -> {
            if (reply.size() < 3) {
                leases.zrem(RedisKeys.LEASE_INDEX, utf8(member));
                return CompletableFuture.completedFuture(new Acquired(null, reply.isEmpty() ? -1 : (Long) reply.get(0)));
            }
            Lease lease = new Lease(conversationId, config.nodeId(), token, number(reply.get(0)),
                    (Long) reply.get(1) == 1, (Long) reply.get(2));
            return indexed.thenApply(v -> new Acquired(lease, -1));
        });
    }

    /**
     * What an acquisition got: the lease, or null and, when the lapsed token it was asked for still
     * holds, that lease's milliseconds left (else -1).
     */
    private record Acquired(Lease lease, long lapsedLeftMs) {
    }

    @Override
    public CompletableFuture<Boolean> raiseFence(Lease lease, long fence) {
        return FENCE_RAISE.<Long>run(leases, ScriptOutputType.INTEGER, RedisKeys.leaseAndMeta(lease.conversationId()),
                utf8(lease.token()), ascii(fence)).thenApply(raised -> raised == 1);
    }

    @Override
    public CompletableFuture<Boolean> renew(Lease lease) {
        long ttlMs = config.leaseTtl().toMillis();
        return LEASE_RENEW.<Long>run(leases, ScriptOutputType.INTEGER,
                        new String[] {RedisKeys.lease(lease.conversationId())}, utf8(lease.token()), ascii(ttlMs))
                .thenCompose(renewed -> renewed == 0 ? CompletableFuture.completedFuture(false)
                        : index(lease, ttlMs).thenApply(v -> true));
    }

    /**
     * {@inheritDoc} Waits for the answer to the lease's last publish still unanswered: a publish
     * whose script Redis had lost (after a restart or {@code SCRIPT FLUSH}) is sent again, whole,
     * only once that answer came, and the release must not overtake it. Either way no reaper gets
     * the lease afterwards.
     */
    @Override
    public CompletableFuture<Boolean> release(Lease lease, long topSeq) {
        CompletableFuture<Published> lastPublish = unanswered.get(lease.token());
        if (lastPublish == null) {
            return sendRelease(lease, topSeq);
        }
        return lastPublish.handle((published, e) -> null).thenCompose(v -> sendRelease(lease, topSeq));
    }

    private CompletableFuture<Boolean> sendRelease(Lease lease, long topSeq) {
        return LEASE_RELEASE.<Long>run(leases, ScriptOutputType.INTEGER, RedisKeys.leaseAndMeta(lease.conversationId()),
                        utf8(lease.token()), ascii(Math.max(0, topSeq)))
                .thenCompose(released -> leases.zrem(RedisKeys.LEASE_INDEX, utf8(indexMember(lease)))
                        .thenApply(removed -> released == 1));
    }

    @Override
    public CompletableFuture<Optional<String>> holder(String conversationId) {
        return leases.get(RedisKeys.lease(conversationId)).toCompletableFuture()
                .thenApply(token -> Optional.ofNullable(token).map(t -> nodeOf(text(t))));
    }

    /**
     * {@inheritDoc} A lease found still held (renewed while the index lagged) stays indexed and is not
     * taken. Each take is one round trip after the claim's: the lease is acquired in the script that
     * checks it lapsed.
     */
    @Override
    public CompletableFuture<List<Taken>> takeExpired(int limit) {
        return LEASE_CLAIM.<List<Object>>run(leases, ScriptOutputType.MULTI, LEASE_INDEX_KEY, ascii(limit))
                .thenCompose(reply -> {
                    long now = (Long) reply.get(0);
                    List<CompletableFuture<Taken>> takes = new ArrayList<>();
                    for (int i = 1; i + 1 < reply.size(); i += 2) {
                        long dueMs = now - (long) Double.parseDouble(text(reply.get(i + 1)));
                        takes.add(take(text(reply.get(i)), dueMs));
                    }
                    return CompletableFuture.allOf(takes.toArray(CompletableFuture[]::new))
                            .thenApply(v -> takes.stream().map(CompletableFuture::join).filter(Objects::nonNull)
                                    .toList());
                });
    }

    /**
     * Takes the lapsed lease an index member stands for; null when it still holds (indexed again) or
     * another node acquired the conversation since. The index had it due {@code dueMs} ago: logged
     * with each take, it tells how soon a reaper came.
     */
    private CompletableFuture<Taken> take(String indexMember, long dueMs) {
        int newline = indexMember.indexOf('\n');
        String token = indexMember.substring(0, newline);
        String conversationId = indexMember.substring(newline + 1);
        return acquire(conversationId, token).thenCompose(acquired -> {
            if (acquired.lease() != null) {
                log.info("took the lapsed write lease of conversation {} from node {}, due {} ms ago",
                        conversationId, nodeOf(token), dueMs);
                return CompletableFuture.completedFuture(new Taken(nodeOf(token), acquired.lease()));
            }
            if (acquired.lapsedLeftMs() < 0) {
                return CompletableFuture.completedFuture(null);
            }
            return LEASE_INDEX.run(leases, ScriptOutputType.INTEGER, LEASE_INDEX_KEY, utf8(indexMember),
                    ascii(acquired.lapsedLeftMs())).thenApply(v -> null);
        });
    }

    private CompletableFuture<Long> index(Lease lease, long ttlMs) {
        return LEASE_INDEX.run(leases, ScriptOutputType.INTEGER, LEASE_INDEX_KEY, utf8(indexMember(lease)),
                ascii(ttlMs));
    }

    /** {@inheritDoc} Every seq must be at least 1; at least one event. */
    @Override
    public CompletableFuture<Published> publish(Lease lease, List<Publication> events) {
        if (events.isEmpty()) {
            throw new IllegalArgumentException("nothing to publish");
        }
        String conversationId = lease.conversationId();
        byte[][] args = new byte[4 + 2 * events.size()][];
        args[0] = utf8(lease.token());
        args[1] = streamMax;
        args[2] = historyTtlSeconds;
        args[3] = utf8(RedisKeys.channel(conversationId));
        for (int i = 0; i < events.size(); i++) {
            Publication event = events.get(i);
            if (event.seq() < 1) {
                throw new IllegalArgumentException("seq is " + event.seq() + " but must be at least 1");
            }
            args[4 + 2 * i] = ascii(event.seq());
            args[5 + 2 * i] = event.payload();
        }
        CompletableFuture<Published> sent = PUBLISH.<Long>run(redis, ScriptOutputType.INTEGER,
                        RedisKeys.conversation(conversationId), args)
                .thenApply(code -> PUBLISH_ANSWERS[code.intValue()]);
        unanswered.put(lease.token(), sent);
        sent.whenComplete((published, e) -> unanswered.remove(lease.token(), sent));
        return sent;
    }

    /** {@inheritDoc} One snapshot: the top seq and the entries were read in one step. */
    @Override
    public CompletableFuture<History> history(String conversationId, long afterSeq, int limit) {
        if (afterSeq < 0 || limit < 1) {
            throw new IllegalArgumentException("afterSeq is " + afterSeq + " and limit " + limit
                    + " but they must be at least 0 and 1");
        }
        return HISTORY.<List<Object>>run(redis, ScriptOutputType.MULTI,
                        new String[] {RedisKeys.meta(conversationId), RedisKeys.stream(conversationId)},
                        ascii("(" + afterSeq), ascii(limit))
                .thenApply(RedisClusterBus::history);
    }

    private static History history(List<Object> reply) {
        List<Entry> entries = new ArrayList<>((reply.size() - 1) / 3);
        for (int i = 1; i < reply.size(); i += 3) {
            String id = text(reply.get(i));
            entries.add(new Entry(Long.parseLong(id, 0, id.indexOf('-'), 10), number(reply.get(i + 1)),
                    (byte[]) reply.get(i + 2)));
        }
        return new History(number(reply.get(0)), entries);
    }

    /**
     * {@inheritDoc} The node subscribes to the conversation's channel while it has at least one
     * listener there; completes once Redis has confirmed that subscription.
     */
    @Override
    public CompletableFuture<Void> subscribe(String conversationId, Consumer<Entry> listener) {
        Objects.requireNonNull(listener, "listener");
        String channel = RedisKeys.channel(conversationId);
        synchronized (liveLock) {
            LiveChannel subscribed = live.get(channel);
            if (subscribed == null) {
                LiveChannel added = new LiveChannel(conversationId,
                        pubSub.async().subscribe(channel).toCompletableFuture());
                live.put(channel, added);
                long asked = System.nanoTime();
                long deliveredBefore = delivered.get();
                added.confirmed.whenComplete((v, e) -> {
                    if (e != null) {
                        synchronized (liveLock) {
                            live.remove(channel, added);
                        }
                        // Tells a pub/sub connection that fell behind (few or no messages since the
                        // request) from a confirmation that went missing while messages flowed.
                        unconfirmed.put(channel, asked);
                        log.warn("Redis did not confirm the subscription to {} ({}); {} messages arrived on the"
                                        + " pub/sub connection since it was asked {} ms ago, the last {} ms ago",
                                channel, oneLine(e), delivered.get() - deliveredBefore,
                                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - asked),
                                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - lastDelivered));
                    }
                });
                subscribed = added;
            }
            subscribed.listeners.add(listener);
            return subscribed.confirmed.copy();
        }
    }

    /** {@inheritDoc} The node leaves the channel with its last listener. */
    @Override
    public CompletableFuture<Void> unsubscribe(String conversationId, Consumer<Entry> listener) {
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

    /** {@inheritDoc} On the pub/sub I/O thread; completes once Redis has confirmed the subscription. */
    @Override
    public CompletableFuture<Void> listen(Consumer<byte[]> listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (liveLock) {
            if (nodeListener != null) {
                throw new IllegalStateException("node " + config.nodeId() + " already has its listener");
            }
            nodeListener = listener;
        }
        return pubSub.async().subscribe(nodeChannel).toCompletableFuture();
    }

    @Override
    public CompletableFuture<Void> send(String nodeId, byte[] message) {
        return redis.publish(RedisKeys.node(nodeId), message).toCompletableFuture().thenApply(receivers -> null);
    }

    private void deliver(String channel, byte[] message) {
        delivered.incrementAndGet();
        lastDelivered = System.nanoTime();
        if (channel.equals(nodeChannel)) {
            deliverToNode(message);
            return;
        }
        LiveChannel subscribed = live.get(channel);
        if (subscribed == null) {
            return;
        }
        Entry entry = parse(message);
        if (entry == null) {
            log.warn("Ignored a message on {} that is not seq:prev:payload", channel);
            return;
        }
        for (Consumer<Entry> listener : subscribed.listeners) {
            try {
                listener.accept(entry);
            } catch (RuntimeException e) {
                try (LogContext.Scope ids = LogContext.open(subscribed.conversationId, null)) {
                    log.warn("A live listener of conversation {} failed", subscribed.conversationId, e);
                }
            }
        }
    }

    private void deliverToNode(byte[] message) {
        Consumer<byte[]> listener = nodeListener;
        if (listener == null) {
            return;
        }
        try {
            listener.accept(message);
        } catch (RuntimeException e) {
            log.warn("The listener of node {} failed", config.nodeId(), e);
        }
    }

    /** Reads what the publish script sends: the seq, {@code :}, the seq before it, {@code :}, the payload. */
    static Entry parse(byte[] message) {
        int seqEnd = digitsEnd(message, 0);
        int prevEnd = seqEnd < 1 ? -1 : digitsEnd(message, seqEnd + 1);
        if (prevEnd <= seqEnd + 1) {
            return null;
        }
        return new Entry(digits(message, 0, seqEnd), digits(message, seqEnd + 1, prevEnd),
                Arrays.copyOfRange(message, prevEnd + 1, message.length));
    }

    /** Where the digits from {@code from} end at a {@code :}; -1 when anything else or too many come first. */
    private static int digitsEnd(byte[] message, int from) {
        for (int i = from; i < message.length && i - from <= 19; i++) {
            if (message[i] == ':') {
                return i;
            }
            if (message[i] < '0' || message[i] > '9') {
                return -1;
            }
        }
        return -1;
    }

    private static long digits(byte[] message, int from, int to) {
        long n = 0;
        for (int i = from; i < to; i++) {
            n = n * 10 + (message[i] - '0');
        }
        return n;
    }

    @Override
    public CompletableFuture<Boolean> claimOnce(String key, Duration ttl) {
        return redis.set(RedisKeys.once(key), ONE, SetArgs.Builder.nx().px(ttl)).toCompletableFuture()
                .thenApply(Objects::nonNull);
    }

    @Override
    public CompletableFuture<Long> count(String key, Duration window) {
        return COUNT_WINDOW.run(redis, ScriptOutputType.INTEGER, new String[] {RedisKeys.counter(key)},
                ascii(window.toMillis()));
    }

    /**
     * {@inheritDoc} Asks with {@code PING} on the command connection and on the lease connection (a
     * node whose leases cannot be renewed cannot write); times out on the bus's own threads.
     */
    @Override
    public CompletableFuture<String> problem(Duration timeout) {
        CompletableFuture<String> commands = ping(redis, "", timeout);
        CompletableFuture<String> leasing = ping(leases, " on the lease connection", timeout);
        return commands.thenCombine(leasing, (a, b) -> a != null ? a : b);
    }

    private CompletableFuture<String> ping(RedisAsyncCommands<String, byte[]> connection, String which,
                                           Duration timeout) {
        CompletableFuture<String> answer = new CompletableFuture<>();
        String silent = "Redis at " + config.address() + " did not answer PING" + which + " within "
                + timeout.toMillis() + " ms";
        var timer = resources.eventExecutorGroup().schedule(() -> answer.complete(silent), timeout.toNanos(),
                TimeUnit.NANOSECONDS);
        connection.ping().whenComplete((pong, e) -> {
            timer.cancel(false);
            answer.complete(e == null ? null
                    : "Redis at " + config.address() + " did not answer PING" + which + ": " + oneLine(e));
        });
        return answer;
    }

    /** The innermost cause's message, on one line; its class's name when it has none. */
    static String oneLine(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String message = cause.getMessage();
        return message == null || message.isBlank() ? cause.getClass().getSimpleName()
                : message.strip().replaceAll("\\s*[\\r\\n]+\\s*", " ");
    }

    /** Closes the connections and the I/O threads. */
    @Override
    public CompletableFuture<Void> close() {
        synchronized (liveLock) {
            live.clear();
            nodeListener = null;
        }
        return CompletableFuture.allOf(shutdown(client, resources), shutdown(leaseClient, leaseResources));
    }

    private static CompletableFuture<Void> shutdown(RedisClient client, ClientResources resources) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        client.shutdownAsync(0, 2, TimeUnit.SECONDS).whenComplete((v, e) ->
                resources.shutdown(0, 2, TimeUnit.SECONDS).addListener(f -> done.complete(null)));
        return done;
    }

    private static String indexMember(Lease lease) {
        return RedisKeys.leaseIndexMember(lease.conversationId(), lease.token());
    }

    /** The node a lease token names: what follows the {@code @} after its random part. */
    private static String nodeOf(String token) {
        return token.substring(token.indexOf('@') + 1);
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
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Object bulk) {
        return new String((byte[]) bulk, StandardCharsets.UTF_8);
    }

    /** A seq the scripts answer as decimal text. */
    private static long number(Object bulk) {
        return Long.parseLong(new String((byte[]) bulk, StandardCharsets.US_ASCII));
    }

    /** One subscribed channel: its conversation, its listeners on this node, Redis's confirmation. */
    private static final class LiveChannel {
        final String conversationId;
        final CompletableFuture<Void> confirmed;
        final List<Consumer<Entry>> listeners = new CopyOnWriteArrayList<>();

        LiveChannel(String conversationId, CompletableFuture<Void> confirmed) {
            this.conversationId = conversationId;
            this.confirmed = confirmed;
        }
    }
}
