package dev.switchboard.server.internal;

import dev.switchboard.core.spi.AdapterContext;
import dev.switchboard.core.spi.Probe;
import dev.switchboard.core.spi.WireAdapter;
import dev.switchboard.core.spi.WireAdapterProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The dialects the gateway found (see {@code Plugins}), and which serve each WebSocket path. Two providers
 * with one id stop start-up, naming both classes.
 */
public final class AdapterRegistry {
    private static final Logger log = LoggerFactory.getLogger(AdapterRegistry.class);

    private final Map<String, WireAdapter> byId = new LinkedHashMap<>();
    private final Map<String, List<WireAdapter>> byPath = new LinkedHashMap<>();
    private final Map<String, WireAdapter> byHttpPath = new LinkedHashMap<>();

    public AdapterRegistry(Iterable<WireAdapterProvider> providers, AdapterContext context) {
        Map<String, WireAdapterProvider> seen = new LinkedHashMap<>();
        for (WireAdapterProvider p : providers) {
            WireAdapterProvider prior = seen.putIfAbsent(p.id(), p);
            if (prior != null) {
                throw new IllegalStateException("two wire adapters have the id '" + p.id() + "': "
                        + prior.getClass().getName() + " and " + p.getClass().getName());
            }
            WireAdapter a = p.create(context);
            byId.put(a.id(), a);
            for (String path : a.webSocketPaths()) {
                byPath.computeIfAbsent(path, k -> new ArrayList<>()).add(a);
            }
            for (String path : a.httpPaths()) {
                WireAdapter other = byHttpPath.putIfAbsent(path, a);
                if (other != null) {
                    throw new IllegalStateException("dialects " + other.id() + " and " + a.id()
                            + " both serve POST " + path);
                }
            }
        }
        for (Map.Entry<String, List<WireAdapter>> e : byPath.entrySet()) {
            long fallbacks = e.getValue().stream().filter(WireAdapter::fallback).count();
            if (fallbacks > 1) {
                throw new IllegalStateException("more than one dialect is the fallback of path " + e.getKey());
            }
        }
        log.info("wire adapters: {}", byId.keySet());
    }

    /** Dialects serving a WebSocket path (empty when none). */
    public List<WireAdapter> forPath(String path) {
        return byPath.getOrDefault(path, List.of());
    }

    /** The dialect and conversation a {@code GET} of this path reattaches to, if any. */
    public Optional<Map.Entry<WireAdapter, String>> reattach(String path) {
        for (WireAdapter a : byId.values()) {
            Optional<String> conversation = a.reattachConversation(path);
            if (conversation.isPresent()) {
                return Optional.of(Map.entry(a, conversation.get()));
            }
        }
        return Optional.empty();
    }

    /** The dialect serving {@code POST path}, if any. */
    public Optional<WireAdapter> forHttpPath(String path) {
        return Optional.ofNullable(byHttpPath.get(path));
    }

    /** The dialect of a path chosen by a {@code Sec-WebSocket-Protocol} value. */
    public Optional<WireAdapter> bySubprotocol(String path, String subprotocol) {
        if (subprotocol == null) {
            return Optional.empty();
        }
        for (WireAdapter a : forPath(path)) {
            if (a.subprotocols().contains(subprotocol)) {
                return Optional.of(a);
            }
        }
        return Optional.empty();
    }

    /**
     * The dialects of a path whose conversation parameter ({@link WireAdapter#conversationParameter})
     * the query names with a non-blank value: one of them chooses its dialect at the upgrade.
     */
    public List<WireAdapter> byConversationParameter(String path, Map<String, List<String>> query) {
        List<WireAdapter> named = new ArrayList<>();
        for (WireAdapter a : forPath(path)) {
            Optional<String> param = a.conversationParameter();
            if (param.isPresent() && query.getOrDefault(param.get(), List.of()).stream().anyMatch(v -> !v.isBlank())) {
                named.add(a);
            }
        }
        return named;
    }

    /** Comma-separated subprotocols offered on a path, or null for none. */
    public String subprotocolsOf(String path) {
        List<String> all = new ArrayList<>();
        for (WireAdapter a : forPath(path)) {
            all.addAll(a.subprotocols());
        }
        return all.isEmpty() ? null : String.join(",", all);
    }

    /**
     * The dialect of a shared path's connection from its first frame (a whole WebSocket
     * message, so no probe can need more): the one whose probe matches, else the path's fallback.
     */
    public WireAdapter probe(String path, String firstFrame) {
        List<WireAdapter> candidates = forPath(path);
        if (candidates.size() == 1) {
            return candidates.get(0);
        }
        WireAdapter fallback = null;
        for (WireAdapter a : candidates) {
            if (a.probe(firstFrame) == Probe.MATCH) {
                return a;
            }
            if (a.fallback()) {
                fallback = a;
            }
        }
        return fallback != null ? fallback : candidates.get(0);
    }

    public Map<String, WireAdapter> all() {
        return byId;
    }
}
