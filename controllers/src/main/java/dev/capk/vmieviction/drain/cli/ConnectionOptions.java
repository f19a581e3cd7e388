package dev.capk.vmieviction.drain.cli;

import io.kubernetes.client.openapi.ApiClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/**
 * kubectl's global flags that choose and reach the cluster, shared by every subcommand (the node
 * commands here, and the jar's {@code status} command). Only the flags that mean something here
 * exist; any other global flag of kubectl is refused by name.
 */
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

  /** The namespace chosen with -n, or null. */
  public String namespace() {
    return namespace;
  }

  /** The -v level. */
  public int verbosity() {
    return verbosity;
  }

  /** An API client for the chosen kubeconfig, context, cluster and user. */
  public ApiClient connect(Map<String, String> env) throws KubeconfigClients.KubeconfigException {
    return KubeconfigClients.load(
        new KubeconfigClients.Selection(kubeconfig, context, cluster, user, requestTimeout), env);
  }

  /**
   * kubectl's --request-timeout: a bare integer is seconds, otherwise a Go duration; never
   * negative.
   */
  static final class RequestTimeoutConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      try {
        Duration d =
            value.matches("\\d+")
                ? Duration.ofSeconds(Long.parseLong(value))
                : dev.capk.vmieviction.time.GoDuration.parse(value);
        if (!d.isNegative()) {
          return d;
        }
      } catch (IllegalArgumentException e) {
        // fall through to kubectl's message
      }
      throw new CommandLine.TypeConversionException(
          "invalid timeout value. Timeout must be a single integer in seconds, or an integer"
              + " followed by a corresponding time unit (e.g. 1s | 2m | 3h)");
    }
  }
}
