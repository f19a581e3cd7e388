package dev.capk.vmieviction.drain.cli;

import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.util.ClientBuilder;
import io.kubernetes.client.util.KubeConfig;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * Builds an API client from a kubeconfig the way kubectl finds one: --kubeconfig, else $KUBECONFIG,
 * else ~/.kube/config, else the in-cluster service account. Failures are one-line messages that
 * name the file and the problem, never the file's content (it holds credentials).
 */
public final class KubeconfigClients {
  /** An error to show the user as is. */
  public static final class KubeconfigException extends Exception {
    private static final long serialVersionUID = 1L;

    KubeconfigException(String message) {
      super(message);
    }
  }

  /** Long enough for any single request of a drain; watches set their own. */
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

  private KubeconfigClients() {}

  /**
   * What the connection flags chose: a file (null: kubectl's search), a context, cluster and user
   * (null: the context's own), and a per-request time limit (zero: none).
   */
  record Selection(
      Path kubeconfig, String context, String cluster, String user, Duration requestTimeout) {
    Selection {
      requestTimeout = requestTimeout == null ? Duration.ZERO : requestTimeout;
    }

    static Selection of(Path kubeconfig, String context) {
      return new Selection(kubeconfig, context, null, null, Duration.ZERO);
    }
  }

  static ApiClient load(Path explicit, String context, Map<String, String> env)
      throws KubeconfigException {
    return load(Selection.of(explicit, context), env);
  }

  static ApiClient load(Selection selection, Map<String, String> env) throws KubeconfigException {
    ApiClient client = find(selection, env);
    if (!selection.requestTimeout().isZero()) {
      // As kubectl's --request-timeout: a bound on each whole request. The drain's watch builds its
      // own HTTP client without a call timeout, so a long wait for pods is not cut short.
      client.setHttpClient(
          client.getHttpClient().newBuilder().callTimeout(selection.requestTimeout()).build());
    }
    return client;
  }

  private static ApiClient find(Selection selection, Map<String, String> env)
      throws KubeconfigException {
    Path file = selection.kubeconfig();
    if (file == null) {
      String fromEnv = env.get("KUBECONFIG");
      if (fromEnv != null && !fromEnv.isBlank()) {
        for (String p : fromEnv.split(java.io.File.pathSeparator)) {
          if (!p.isBlank() && Files.exists(Path.of(p))) {
            file = Path.of(p);
            break;
          }
        }
        if (file == null) {
          throw new KubeconfigException("no kubeconfig found at KUBECONFIG=" + fromEnv);
        }
      } else {
        String home = env.getOrDefault("HOME", System.getProperty("user.home"));
        Path dflt = Path.of(home, ".kube", "config");
        if (Files.exists(dflt)) {
          file = dflt;
        } else if (env.containsKey("KUBERNETES_SERVICE_HOST")) {
          return inCluster();
        } else {
          throw new KubeconfigException(
              "no kubeconfig: use --kubeconfig, set KUBECONFIG, or create ~/.kube/config");
        }
      }
    }
    return fromFile(file, selection.context(), selection.cluster(), selection.user());
  }

  /**
   * kubectl's --cluster and --user: the chosen context, in memory only, names another cluster or
   * user of the same kubeconfig. The file is never written.
   */
  @SuppressWarnings("unchecked")
  private static void overrideContext(KubeConfig config, String cluster, String user)
      throws KubeconfigException {
    boolean newCluster = cluster != null && !cluster.isBlank();
    boolean newUser = user != null && !user.isBlank();
    if (!newCluster && !newUser) {
      return;
    }
    if (newCluster && !hasNamed(config.getClusters(), cluster)) {
      throw new KubeconfigException("cluster \"" + cluster + "\" does not exist");
    }
    if (newUser && !hasNamed(config.getUsers(), user)) {
      throw new KubeconfigException("auth info \"" + user + "\" does not exist");
    }
    String name = config.getCurrentContext();
    for (Object o : config.getContexts()) {
      if (o instanceof Map<?, ?> entry && name.equals(entry.get("name"))) {
        Map<String, Object> ctx = new java.util.HashMap<>();
        if (entry.get("context") instanceof Map<?, ?> old) {
          ((Map<String, Object>) old).forEach(ctx::put);
        }
        if (newCluster) {
          ctx.put("cluster", cluster);
        }
        if (newUser) {
          ctx.put("user", user);
        }
        ((Map<String, Object>) entry).put("context", ctx);
        config.setContext(name);
        return;
      }
    }
  }

  private static boolean hasNamed(java.util.List<Object> entries, String name) {
    return entries != null
        && entries.stream().anyMatch(o -> o instanceof Map<?, ?> m && name.equals(m.get("name")));
  }

  private static ApiClient inCluster() throws KubeconfigException {
    try {
      return ClientBuilder.cluster().setReadTimeout(READ_TIMEOUT).build();
    } catch (IOException | RuntimeException e) {
      throw new KubeconfigException(
          "cannot use the in-cluster service account: " + e.getClass().getSimpleName());
    }
  }

  static ApiClient fromFile(Path file, String context) throws KubeconfigException {
    return fromFile(file, context, null, null);
  }

  static ApiClient fromFile(Path file, String context, String cluster, String user)
      throws KubeconfigException {
    KubeConfig config;
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      config = KubeConfig.loadKubeConfig(r);
    } catch (NoSuchFileException e) {
      throw new KubeconfigException("kubeconfig " + file + " does not exist");
    } catch (AccessDeniedException e) {
      throw new KubeconfigException("kubeconfig " + file + " is not readable");
    } catch (MarkedYAMLException e) {
      // Only the problem and the line: the snippet the exception carries may hold a token.
      int line = e.getProblemMark() == null ? -1 : e.getProblemMark().getLine() + 1;
      throw new KubeconfigException(
          "kubeconfig "
              + file
              + " is not valid YAML: "
              + e.getProblem()
              + (line > 0 ? " (line " + line + ")" : ""));
    } catch (IOException | RuntimeException e) {
      throw new KubeconfigException(
          "kubeconfig " + file + " cannot be read: " + e.getClass().getSimpleName());
    }
    if (config == null || config.getContexts() == null || config.getContexts().isEmpty()) {
      throw new KubeconfigException("kubeconfig " + file + " has no contexts");
    }
    config.setFile(file.toAbsolutePath().toFile());
    if (context != null && !context.isBlank()) {
      if (!config.setContext(context)) {
        // kubectl's wording
        throw new KubeconfigException("context \"" + context + "\" does not exist");
      }
    } else if (config.getCurrentContext() == null || config.getCurrentContext().isBlank()) {
      throw new KubeconfigException(
          "kubeconfig " + file + " has no current-context: use --context");
    }
    overrideContext(config, cluster, user);
    String server;
    try {
      server = config.getServer();
    } catch (RuntimeException e) {
      server = null;
    }
    if (server == null || server.isBlank()) {
      throw new KubeconfigException(
          "kubeconfig " + file + ": the current context's cluster has no server");
    }
    try {
      return ClientBuilder.kubeconfig(config).setReadTimeout(READ_TIMEOUT).build();
    } catch (IOException | RuntimeException e) {
      throw new KubeconfigException(
          "kubeconfig "
              + file
              + ": cannot set up credentials or TLS ("
              + e.getClass().getSimpleName()
              + ")");
    }
  }
}
