package dev.switchboard.cluster.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisAsyncCommands;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * One Lua script of this package, run by its SHA-1 ({@code EVALSHA}) and sent whole ({@code EVAL},
 * which also caches it again) when Redis answers {@code NOSCRIPT}, as it does after a restart or a
 * {@code SCRIPT FLUSH}.
 */
final class RedisScript {
    final String name;
    final String source;
    final String sha;

    private RedisScript(String name, String source) {
        this.name = name;
        this.source = source;
        try {
            sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1")
                    .digest(source.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-1", e);
        }
    }

    /** The script in the resource {@code name.lua} next to this class. */
    static RedisScript named(String name) {
        try (InputStream in = RedisScript.class.getResourceAsStream(name + ".lua")) {
            if (in == null) {
                throw new IllegalStateException("script " + name + ".lua is missing from the jar");
            }
            return new RedisScript(name, new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    <T> CompletableFuture<T> run(RedisAsyncCommands<String, byte[]> redis, ScriptOutputType type, String[] keys,
                                 byte[]... args) {
        CompletableFuture<T> bySha = redis.<T>evalsha(sha, type, keys, args).toCompletableFuture();
        return bySha.exceptionallyCompose(e -> cause(e) instanceof RedisNoScriptException
                ? redis.<T>eval(source, type, keys, args).toCompletableFuture()
                : CompletableFuture.failedFuture(e));
    }

    private static Throwable cause(Throwable e) {
        return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
    }
}
