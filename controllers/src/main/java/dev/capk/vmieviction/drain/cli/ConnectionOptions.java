package dev.capk.vmieviction.drain.cli;

import dev.capk.vmieviction.kube.ClientCertificates;
import dev.capk.vmieviction.logging.LogbackConfigurator;
import dev.capk.vmieviction.time.GoDuration;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.File;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import okhttp3.OkHttpClient;
import okhttp3.Protocol;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * kubectl's global flags that choose and reach the cluster, shared by every subcommand (the node
 * commands here, and the jar's {@code status} command), and the API client they choose. Only the
 * flags that mean something here exist; any other global flag of kubectl is refused by name.
 */
@Command(addMethodSubcommands = false)
public final class ConnectionOptions {
  @Option(
      names = "--kubeconfig",
      paramLabel = "FILE",
      description =
          "Path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster).")
  Path kubeconfig;

  @Option(
      names = "--context",
      paramLabel = "NAME",
      description = "The name of the kubeconfig context to use (default: its current-context).")
  String context;

  @Option(
      names = "--cluster",
      paramLabel = "NAME",
      description = "The name of the kubeconfig cluster to use.")
  String cluster;

  @Option(
      names = "--user",
      paramLabel = "NAME",
      description = "The name of the kubeconfig user to use.")
  String user;

  @Option(
      names = "--request-timeout",
      defaultValue = "0",
      paramLabel = "DURATION",
      converter = RequestTimeoutConverter.class,
      description =
          "The length of time to wait before giving up on a single server request (e.g. 1s, 2m;"
              + " a bare number is seconds). Zero means don't time out requests.")
  Duration requestTimeout;

  @Option(
      names = {"-n", "--namespace"},
      paramLabel = "NS",
      description =
          "The namespace. status lists only the evacuations in it (default: all namespaces);"
              + " drain, cordon and uncordon accept it as kubectl does and, since nodes are not"
              + " namespaced, it changes nothing there.")
  String namespace;

  @Option(
      names = {"-v", "--v"},
      defaultValue = "0",
      paramLabel = "LEVEL",
      description = "Log level: 0 only the report, 1-2 engine log lines, 3+ debug.")
  int verbosity;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;

  public String namespace() {
    return namespace;
  }

  /** Long enough for any single request of a drain; watches set their own. */
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

  /**
   * A client found as kubectl finds one: --kubeconfig, $KUBECONFIG, ~/.kube/config, in-cluster;
   * this process logs as -v says from here on. A kubeconfig problem is an IllegalArgumentException
   * whose message names the file and the problem, never the file's content. {@code oneAtATime}: the
   * command sends its requests one after another, so HTTP/1.1 on one kept-alive connection:
   * HTTP/2's start (its preface and settings, a reader thread) costs a fresh process about 40 ms
   * and brings such a command nothing.
   */
  public ApiClient connect(Map<String, String> env, boolean oneAtATime) {
    LogbackConfigurator.setCliVerbosity(verbosity);
    ApiClient client = find(env);
    OkHttpClient.Builder http = client.getHttpClient().newBuilder();
    if (oneAtATime) {
      http.protocols(List.of(Protocol.HTTP_1_1));
    }
    if (requestTimeout != null) {
      // As kubectl's --request-timeout: a bound on each whole request (zero: none). The drain's
      // watch builds its own HTTP client without a call timeout, so a long wait is not cut short.
      http.callTimeout(requestTimeout);
    }
    return client.setHttpClient(http.build());
  }

  /**
   * Closes the client's kept-alive connections, as a command ends: the JVM's exit waits up to 0.3 s
   * for threads blocked in native code (HotSpot's VM_Exit), and OkHttp's HTTP/2 reader thread
   * blocks reading an open connection; closed, it ends at once.
   */
  public static void close(ApiClient client) {
    client.getHttpClient().connectionPool().evictAll();
  }

  private ApiClient find(Map<String, String> env) {
    if (kubeconfig != null) {
      return fromFile(kubeconfig);
    }
    String fromEnv = env.get("KUBECONFIG");
    if (fromEnv != null && !fromEnv.isBlank()) {
      return fromFile(
          Arrays.stream(fromEnv.split(File.pathSeparator))
              .filter(p -> !p.isBlank() && Files.exists(Path.of(p)))
              .map(Path::of)
              .findFirst()
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "no kubeconfig found at KUBECONFIG=" + fromEnv)));
    }
    Path home = Path.of(env.getOrDefault("HOME", System.getProperty("user.home")));
    if (Files.exists(home.resolve(".kube/config"))) {
      return fromFile(home.resolve(".kube/config"));
    }
    if (!env.containsKey("KUBERNETES_SERVICE_HOST")) {
      throw new IllegalArgumentException(
          "no kubeconfig: use --kubeconfig, set KUBECONFIG, or create ~/.kube/config");
    }
    try {
      return ClientBuilder.cluster().setReadTimeout(READ_TIMEOUT).build();
    } catch (IOException | RuntimeException e) {
      throw new IllegalArgumentException(
          "cannot use the in-cluster service account: " + e.getClass().getSimpleName());
    }
  }

  private ApiClient fromFile(Path file) {
    Function<String, IllegalArgumentException> bad =
        problem -> new IllegalArgumentException("kubeconfig " + file + problem);
    KubeConfig config;
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      config = KubeConfig.loadKubeConfig(r);
    } catch (NoSuchFileException e) {
      throw bad.apply(" does not exist");
    } catch (AccessDeniedException e) {
      throw bad.apply(" is not readable");
    } catch (MarkedYAMLException e) {
      // Only the problem and the line: the snippet the exception carries may hold a token.
      int line = e.getProblemMark() == null ? -1 : e.getProblemMark().getLine() + 1;
      throw bad.apply(
          " is not valid YAML: " + e.getProblem() + (line > 0 ? " (line " + line + ")" : ""));
    } catch (IOException | RuntimeException e) {
      throw bad.apply(" cannot be read: " + e.getClass().getSimpleName());
    }
    if (config == null || config.getContexts() == null || config.getContexts().isEmpty()) {
      throw bad.apply(" has no contexts");
    }
    config.setFile(file.toAbsolutePath().toFile());
    if (given(context) && !config.setContext(context)) {
      throw new IllegalArgumentException("context \"" + context + "\" does not exist"); // kubectl's
    } else if (!given(context) && !given(config.getCurrentContext())) {
      throw bad.apply(" has no current-context: use --context");
    }
    if (given(cluster) || given(user)) {
      overrideContext(config);
    }
    String server;
    try {
      server = config.getServer();
    } catch (RuntimeException e) {
      server = null;
    }
    if (!given(server)) {
      throw bad.apply(": the current context's cluster has no server");
    }
    try {
      return ClientCertificates.builder(config).setReadTimeout(READ_TIMEOUT).build();
    } catch (IOException | RuntimeException e) {
      throw bad.apply(": cannot set up credentials or TLS (" + e.getClass().getSimpleName() + ")");
    }
  }

  /** kubectl's --cluster and --user: the context names them, in memory only (never the file). */
  @SuppressWarnings("unchecked")
  private void overrideContext(KubeConfig config) {
    if (given(cluster) && !hasNamed(config.getClusters(), cluster)) {
      throw new IllegalArgumentException("cluster \"" + cluster + "\" does not exist");
    }
    if (given(user) && !hasNamed(config.getUsers(), user)) {
      throw new IllegalArgumentException("auth info \"" + user + "\" does not exist");
    }
    String name = config.getCurrentContext();
    for (Object o : config.getContexts()) {
      if (o instanceof Map<?, ?> entry && name.equals(entry.get("name"))) {
        Map<String, Object> ctx = new HashMap<>();
        if (entry.get("context") instanceof Map<?, ?> old) {
          ctx.putAll((Map<String, Object>) old);
        }
        ctx.put("cluster", given(cluster) ? cluster : ctx.get("cluster"));
        ctx.put("user", given(user) ? user : ctx.get("user"));
        ((Map<String, Object>) entry).put("context", ctx);
      }
    }
    config.setContext(name);
  }

  private static boolean given(String value) {
    return value != null && !value.isBlank();
  }

  private static boolean hasNamed(List<Object> entries, String name) {
    return entries != null
        && entries.stream().anyMatch(o -> o instanceof Map<?, ?> m && name.equals(m.get("name")));
  }

  /** Go durations (90s, 5m), as kubectl's duration flags. */
  static class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        return GoDuration.parse(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
    }
  }

  /** kubectl's --request-timeout: also bare integer seconds; never negative. */
  static final class RequestTimeoutConverter extends DurationConverter {
    @Override
    public Duration convert(String value) {
      try {
        Duration d =
            value.matches("\\d+")
                ? Duration.ofSeconds(Long.parseLong(value))
                : super.convert(value);
        if (!d.isNegative()) {
          return d;
        }
      } catch (RuntimeException e) {
        // fall through to kubectl's message
      }
      throw new CommandLine.TypeConversionException(
          "invalid timeout value. Timeout must be a single integer in seconds, or an integer"
              + " followed by a corresponding time unit (e.g. 1s | 2m | 3h)");
    }
  }
}
