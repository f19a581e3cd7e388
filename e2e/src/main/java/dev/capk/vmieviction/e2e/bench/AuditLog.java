package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.e2e.harness.KubeCluster;
import dev.capk.vmieviction.e2e.harness.LocalCluster;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What the API servers saw, from their audit logs. Attribution of requests to one client: {@code
 * apiserver_request_total} has no client label, so the API servers of the evacuation benchmark
 * write an audit log of the controller's identity only (a client certificate of its own, user
 * {@value #USER}); each line is one request the controller sent. Timing: the head-of-line benchmark
 * logs the few requests it times (a VMI's marking and deletion, a pod's deletion), so that its
 * times are the API servers' own, not those of a watch that may fall behind.
 */
public final class AuditLog {
  public static final String USER = "capk-vmi-eviction-controller";

  private AuditLog() {}

  /** The policy rule that logs the controller's requests, at Metadata level. */
  static final String CONTROLLER_RULE =
      """
      - level: Metadata
        users: ["%s"]
      """
          .formatted(USER);

  /**
   * Writes a policy of its own for {@code cluster} (the given rules at Metadata level, then nothing
   * else) and returns the kube-apiserver flags.
   *
   * @param rules YAML list items of the policy's rules, unindented
   */
  public static List<String> apiServerFlags(Path dir, String cluster, String rules) {
    try {
      Files.createDirectories(dir);
      Path policy = dir.resolve(cluster + "-audit-policy.yaml");
      Files.writeString(
          policy,
          """
          apiVersion: audit.k8s.io/v1
          kind: Policy
          omitStages: [RequestReceived, ResponseStarted]
          rules:
          """
              + rules
              + "- level: None\n");
      Path log = dir.resolve(cluster + "-audit.log");
      Files.deleteIfExists(log);
      return List.of(
          "--audit-policy-file=" + policy,
          "--audit-log-path=" + log,
          "--audit-log-format=json",
          "--audit-log-mode=blocking");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code b}, its API server writing the audit log of {@code rules} (see above). */
  static LocalCluster.Builder audited(LocalCluster.Builder b, Path dir, String name, String rules) {
    apiServerFlags(dir, name, rules).forEach(b::apiServerFlag);
    return b;
  }

  /**
   * The infra kubeconfig of the controller's own identity ({@link #USER}, whose requests the audit
   * logs keep), written to {@code file}.
   */
  static Path controllerKubeconfig(LocalCluster infra, Path file) {
    try {
      Files.writeString(file, infra.kubeconfigFor(USER, "system:masters"));
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static Path logOf(Path dir, String cluster) {
    return dir.resolve(cluster + "-audit.log");
  }

  /**
   * The controller's requests received in [from, to), by "verb resource[/subresource]", WATCH
   * excluded.
   */
  public static Map<String, Integer> count(Path log, Instant from, Instant to) {
    Map<String, Integer> out = new TreeMap<>();
    if (!Files.exists(log)) {
      return out;
    }
    try (Stream<String> lines = Files.lines(log)) {
      lines.forEach(
          line -> {
            JsonObject e = JsonParser.parseString(line).getAsJsonObject();
            String verb = e.get("verb").getAsString();
            if (verb.equals("watch") || !USER.equals(RawKube.str(e, "user", "username"))) {
              return;
            }
            Instant at = Instant.parse(e.get("requestReceivedTimestamp").getAsString());
            if (at.isBefore(from) || !at.isBefore(to)) {
              return;
            }
            String resource = RawKube.str(e, "objectRef", "resource");
            String sub = RawKube.str(e, "objectRef", "subresource");
            String what =
                resource == null
                    ? "(non-resource) " + e.get("requestURI").getAsString().replaceAll("\\?.*", "")
                    : resource + (sub == null ? "" : "/" + sub);
            out.merge(verb + " " + what, 1, Integer::sum);
          });
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out;
  }

  /** {@link #count} over the logs of {@code clusters}, summed. */
  static Map<String, Integer> count(
      Path dir, List<? extends KubeCluster> clusters, Instant from, Instant to) {
    Map<String, Integer> out = new TreeMap<>();
    for (KubeCluster c : clusters) {
      count(logOf(dir, c.name()), from, to).forEach((k, v) -> out.merge(k, v, Integer::sum));
    }
    return out;
  }

  /** One request of the log: what was asked of which object, when, and with what answer. */
  public record Entry(
      String verb,
      String resource,
      String subresource,
      String name,
      int code,
      Instant received,
      Instant completed) {}

  /** Every completed request in the log (an absent log has none). */
  public static List<Entry> entries(Path log) {
    if (!Files.exists(log)) {
      return List.of();
    }
    try (Stream<String> lines = Files.lines(log)) {
      return lines
          .map(line -> JsonParser.parseString(line).getAsJsonObject())
          .map(
              e ->
                  new Entry(
                      e.get("verb").getAsString(),
                      RawKube.str(e, "objectRef", "resource"),
                      RawKube.str(e, "objectRef", "subresource"),
                      RawKube.str(e, "objectRef", "name"),
                      e.has("responseStatus") && e.getAsJsonObject("responseStatus").has("code")
                          ? e.getAsJsonObject("responseStatus").get("code").getAsInt()
                          : 0,
                      Instant.parse(e.get("requestReceivedTimestamp").getAsString()),
                      Instant.parse(e.get("stageTimestamp").getAsString())))
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * After a start a controller checks every Running VMI once (the uncordon check): those requests
   * are no evacuation's, so a run starts when the audit logs of {@code clusters} have not grown for
   * 3 s (at most 2 minutes).
   */
  static void awaitQuiet(Path dir, List<? extends KubeCluster> clusters)
      throws InterruptedException, IOException {
    long quietSince = System.nanoTime();
    long last = -1;
    long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
    while (System.nanoTime() < deadline && System.nanoTime() - quietSince < 3_000_000_000L) {
      long size = 0;
      for (KubeCluster c : clusters) {
        Path log = logOf(dir, c.name());
        size += Files.exists(log) ? Files.size(log) : 0;
      }
      if (size != last) {
        quietSince = System.nanoTime();
        last = size;
      }
      Thread.sleep(250);
    }
  }

  static int total(Map<String, Integer> counts) {
    return counts.values().stream().mapToInt(Integer::intValue).sum();
  }
}
