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
final class KubeconfigClients {
  /** An error to show the user as is. */
  static final class KubeconfigException extends Exception {
    private static final long serialVersionUID = 1L;

    KubeconfigException(String message) {
      super(message);
    }
  }

  /** Long enough for any single request of a drain; watches set their own. */
  private static final Duration READ_TIMEOUT = Duration.ofSeconds(60);

  private KubeconfigClients() {}

  static ApiClient load(Path explicit, String context, Map<String, String> env)
      throws KubeconfigException {
    Path file = explicit;
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
    return fromFile(file, context);
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
        throw new KubeconfigException(
            "context \"" + context + "\" not found in kubeconfig " + file);
      }
    } else if (config.getCurrentContext() == null || config.getCurrentContext().isBlank()) {
      throw new KubeconfigException(
          "kubeconfig " + file + " has no current-context: use --context");
    }
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
