package dev.capk.vmieviction.e2e.bench;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Attribution of API requests to one client. {@code apiserver_request_total} has no client label,
 * so the API servers of the evacuation benchmark also write an audit log of the controller's
 * identity only (a client certificate of its own, user {@value #USER}); each line is one request
 * the controller sent.
 */
final class AuditLog {
  static final String USER = "capk-vmi-eviction-controller";

  private AuditLog() {}

  /**
   * Writes the policy (Metadata level for the controller's user, nothing else) and returns the
   * kube-apiserver flags.
   */
  static List<String> apiServerFlags(Path dir, String cluster) {
    try {
      Files.createDirectories(dir);
      Path policy = dir.resolve("audit-policy.yaml");
      Files.writeString(
          policy,
          """
                    apiVersion: audit.k8s.io/v1
                    kind: Policy
                    omitStages: [RequestReceived, ResponseStarted]
                    rules:
                    - level: Metadata
                      users: ["%s"]
                    - level: None
                    """
              .formatted(USER));
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

  static Path logOf(Path dir, String cluster) {
    return dir.resolve(cluster + "-audit.log");
  }

  /**
   * The controller's requests received in [from, to), by "verb resource[/subresource]", WATCH
   * excluded.
   */
  static Map<String, Integer> count(Path log, Instant from, Instant to) {
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

  static int total(Map<String, Integer> counts) {
    return counts.values().stream().mapToInt(Integer::intValue).sum();
  }
}
