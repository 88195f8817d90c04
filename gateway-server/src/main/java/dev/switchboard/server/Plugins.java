package dev.switchboard.server;

import dev.switchboard.core.spi.AgentRuntimeProvider;
import dev.switchboard.core.spi.AuthenticatorProvider;
import dev.switchboard.core.spi.ClusterProvider;
import dev.switchboard.core.spi.ConversationStoreProvider;
import dev.switchboard.core.spi.OptionSpec;
import dev.switchboard.core.spi.Plugin;
import dev.switchboard.core.spi.RestServiceProvider;
import dev.switchboard.core.spi.WireAdapterProvider;

import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.function.Predicate;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Every provider the gateway can assemble: the modules on its class path ("built in") and the jars
 * of its plugin directory, each jar with a class loader of its own, found alike by
 * {@link ServiceLoader}. Loading checks what would otherwise fail later or silently: a jar that
 * cannot be read or holds no provider, a provider class that does not load, two providers of one
 * kind with one id, and an option declared by two plugins differently or clashing with the host's.
 * Each stops start-up with a {@link StartupException} naming the jar and the problem.
 */
public final class Plugins {

    /** The kinds of provider, each an SPI of {@code core.spi}. */
    public enum Kind {
        DIALECT("dialect", WireAdapterProvider.class),
        RUNTIME("runtime", AgentRuntimeProvider.class),
        STORE("store", ConversationStoreProvider.class),
        AUTHENTICATOR("authentication", AuthenticatorProvider.class),
        REST("REST service", RestServiceProvider.class),
        CLUSTER("cluster", ClusterProvider.class);

        private final String noun;
        private final Class<? extends Plugin> spi;

        Kind(String noun, Class<? extends Plugin> spi) {
            this.noun = noun;
            this.spi = spi;
        }

        public String noun() {
            return noun;
        }
    }

    /** A provider and where it came from: {@code built in}, or its jar. */
    public record Found(Kind kind, Plugin provider, String origin) {
        /** How messages and {@code --help} name it, e.g. {@code runtime openai}. */
        public String title() {
            return kind.noun + " " + provider.id() + (origin.equals(BUILT_IN) ? "" : " (" + origin + ")");
        }
    }

    /** One plugin's options, for {@code --help}. */
    public record OptionGroup(String title, List<OptionSpec> options) {
    }

    /** The origin of the providers on the gateway's own class path. */
    public static final String BUILT_IN = "built in";

    private static volatile Plugins builtIn;

    private final List<Found> found;
    /** The plugins' options by name, each from the first plugin that declares it. */
    private final Map<String, OptionSpec> options = new LinkedHashMap<>();

    private Plugins(List<Found> found) {
        this.found = List.copyOf(found);
        Map<String, Found> declaredBy = new LinkedHashMap<>();
        Map<Kind, Map<String, Found>> ids = new EnumMap<>(Kind.class);
        for (Found f : found) {
            Found twin = ids.computeIfAbsent(f.kind, k -> new LinkedHashMap<>()).putIfAbsent(f.provider.id(), f);
            if (twin != null) {
                throw new StartupException(where(f) + "the " + f.kind.noun + " id '" + f.provider.id()
                        + "' is already provided by " + twin.provider.getClass().getName() + " (" + twin.origin + ")");
            }
            for (OptionSpec o : f.provider.options()) {
                if (GatewayConfig.Option.byKey(o.name()).isPresent()) {
                    throw new StartupException(where(f) + f.title() + " declares option --" + o.name()
                            + ", which is one of the gateway's own");
                }
                Found first = declaredBy.putIfAbsent(o.name(), f);
                if (first == null) {
                    options.put(o.name(), o);
                } else if (!options.get(o.name()).sameAs(o)) {
                    throw new StartupException(where(f) + f.title() + " declares option --" + o.name()
                            + " (" + o.accepts() + ", default '" + o.defaultValue() + "') unlike " + first.title()
                            + " (" + options.get(o.name()).accepts() + ", default '"
                            + options.get(o.name()).defaultValue() + "')");
                }
            }
        }
    }

    private static String where(Found f) {
        return f.origin.equals(BUILT_IN) ? "" : "plugin jar " + f.origin + ": ";
    }

    /** The modules on the gateway's class path. */
    public static Plugins builtIn() {
        Plugins p = builtIn;
        if (p == null) {
            p = new Plugins(find(Plugins.class.getClassLoader(), BUILT_IN, provider -> true));
            builtIn = p;
        }
        return p;
    }

    /** The built-in modules and these providers besides, as if a plugin directory held them. */
    static Plugins builtInAnd(List<Found> more) {
        List<Found> all = new ArrayList<>(builtIn().found);
        all.addAll(more);
        return new Plugins(all);
    }

    /** No plugin at all: the host's options only. */
    static Plugins none() {
        return new Plugins(List.of());
    }

    /** The built-in modules and, when a directory is given, every {@code .jar} in it (by name). */
    public static Plugins load(Optional<Path> dir) {
        if (dir.isEmpty()) {
            return builtIn();
        }
        List<Found> all = new ArrayList<>(builtIn().found);
        List<Path> jars;
        try (Stream<Path> files = Files.list(dir.get())) {
            jars = files.filter(f -> f.getFileName().toString().endsWith(".jar")).sorted().toList();
        } catch (IOException e) {
            throw new StartupException("cannot read the plugin directory " + dir.get() + ": " + e.getMessage(), e);
        }
        for (Path jar : jars) {
            all.addAll(fromJar(jar));
        }
        return new Plugins(all);
    }

    /** The providers of one jar, loaded by a class loader of its own over the gateway's. */
    private static List<Found> fromJar(Path jar) {
        String origin = jar.toString();
        try (JarFile ignored = new JarFile(jar.toFile())) {
            // Opened only to say plainly when the file is no jar at all.
        } catch (IOException e) {
            throw new StartupException("plugin jar " + origin + " cannot be read as a jar: " + e.getMessage(), e);
        }
        URLClassLoader loader;
        try {
            loader = new URLClassLoader("plugin " + jar.getFileName(), new URL[] {jar.toUri().toURL()},
                    Plugins.class.getClassLoader());
        } catch (MalformedURLException e) {
            throw new StartupException("plugin jar " + origin + ": " + e.getMessage(), e);
        }
        // The jar's loader also sees the gateway's own providers; only the jar's classes are its.
        List<Found> mine = find(loader, origin, type -> type.getClassLoader() == loader);
        if (mine.isEmpty()) {
            throw new StartupException("plugin jar " + origin + " holds no Switchboard provider: it needs a "
                    + "META-INF/services file named after one of " + Stream.of(Kind.values())
                    .map(k -> k.spi.getName()).toList() + " listing its provider classes");
        }
        return mine;
    }

    private static List<Found> find(ClassLoader loader, String origin, Predicate<Class<?>> ours) {
        List<Found> out = new ArrayList<>();
        for (Kind kind : Kind.values()) {
            try {
                for (ServiceLoader.Provider<? extends Plugin> p : ServiceLoader.load(kind.spi, loader).stream()
                        .toList()) {
                    if (ours.test(p.type())) {
                        out.add(new Found(kind, p.get(), origin));
                    }
                }
            } catch (ServiceConfigurationError | LinkageError e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                throw new StartupException((origin.equals(BUILT_IN) ? "a built-in " : "plugin jar " + origin + ": a ")
                        + kind.noun + " provider cannot be loaded: " + e.getMessage()
                        + (cause != e ? " (" + cause + ")" : ""), e);
            }
        }
        return out;
    }

    /** The providers of one kind, built-in ones first, then the jars' in name order. */
    @SuppressWarnings("unchecked")
    public <T extends Plugin> List<T> providers(Class<T> spi) {
        return found.stream().filter(f -> f.kind.spi == spi).map(f -> (T) f.provider).toList();
    }

    /** The ids of one kind's providers. */
    public List<String> ids(Kind kind) {
        return found.stream().filter(f -> f.kind == kind).map(f -> f.provider.id()).toList();
    }

    /** Every provider found, with where it came from. */
    public List<Found> all() {
        return found;
    }

    /** Every plugin option, each once. */
    public List<OptionSpec> options() {
        return List.copyOf(options.values());
    }

    /** The options of each plugin that declares any, in the order found. */
    public List<OptionGroup> optionGroups() {
        List<OptionGroup> groups = new ArrayList<>();
        for (Found f : found) {
            if (!f.provider.options().isEmpty()) {
                groups.add(new OptionGroup(Character.toUpperCase(f.title().charAt(0)) + f.title().substring(1),
                        f.provider.options()));
            }
        }
        return groups;
    }
}
