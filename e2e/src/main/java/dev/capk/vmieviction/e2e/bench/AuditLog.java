package dev.capk.vmieviction.e2e.bench;

import static java.util.Collections.nCopies;

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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What the API servers saw, from their audit logs. {@code apiserver_request_total} has no client
 * label, so to attribute requests to the controller it uses a client certificate of its own (user
 * {@value #USER}) and the API servers log that user's requests. The head-of-line and cost
 * benchmarks also log the few requests they time, so that their times are the API servers' own (all
 * on this machine's clock), not those of a watch that may fall behind.
 */
public final class AuditLog {
  public static final String USER = "capk-vmi-eviction-controller";

  private AuditLog() {}

  static final String CONTROLLER_RULE = "- level: Metadata\n  users: [\"" + USER + "\"]\n";

  /** The infra API server's VMI status patches (the marking) and deletions. */
  static final String INFRA_RULES =
      """
      - level: Metadata
        verbs: ["delete"]
        resources: [{group: "kubevirt.io", resources: ["virtualmachineinstances"]}]
      - level: Metadata
        verbs: ["patch"]
        resources: [{group: "kubevirt.io", resources: ["virtualmachineinstances/status"]}]
      """;

  /** A guest API server's pod deletions (kwok's, which complete a graceful deletion). */
  static final String GUEST_RULES =
      """
      - level: Metadata
        verbs: ["delete"]
        resources: [{group: "", resources: ["pods"]}]
      """;

  /**
   * Writes a policy for {@code cluster} (the given rules, YAML list items unindented, then nothing
   * else) and returns the kube-apiserver flags.
   */
  public static List<String> apiServerFlags(Path dir, String cluster, String rules) {
    try {
      Files.createDirectories(dir);
      Path policy = dir.resolve(cluster + "-audit-policy.yaml");
      Files.writeString(
          policy,
          "apiVersion: audit.k8s.io/v1\nkind: Policy\n"
              + "omitStages: [RequestReceived, ResponseStarted]\nrules:\n"
              + rules
              + "- level: None\n");
      Files.deleteIfExists(logOf(dir, cluster));
      return List.of(
          "--audit-policy-file=" + policy,
          "--audit-log-path=" + logOf(dir, cluster),
          "--audit-log-format=json",
          "--audit-log-mode=blocking");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The infra kubeconfig of the controller's own identity, written to {@code file}. */
  static Path controllerKubeconfig(LocalCluster infra, Path file) throws IOException {
    return Files.writeString(file, infra.kubeconfigFor(USER, "system:masters"));
  }

  public static Path logOf(Path dir, String cluster) {
    return dir.resolve(cluster + "-audit.log");
  }

  /** One request of the log: what was asked of which object, when, with what answer, by whom. */
  public record Entry(
      String verb,
      String resource,
      String subresource,
      String name,
      int code,
      Instant received,
      Instant completed,
      String user,
      String uri) {
    boolean within(Instant from, Instant to) {
      return !received.isBefore(from) && received.isBefore(to);
    }

    boolean vmi(String sub) {
      return "virtualmachineinstances".equals(resource)
          && java.util.Objects.equals(sub, subresource);
    }
  }

  /** Every completed request in the log (an absent log has none). */
  public static List<Entry> entries(Path log) {
    if (!Files.exists(log)) {
      return List.of();
    }
    try (Stream<String> lines = Files.lines(log)) {
      return lines.map(l -> entry(JsonParser.parseString(l).getAsJsonObject())).toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Entry entry(JsonObject e) {
    String code = RawKube.str(e, "responseStatus", "code");
    return new Entry(
        e.get("verb").getAsString(),
        RawKube.str(e, "objectRef", "resource"),
        RawKube.str(e, "objectRef", "subresource"),
        RawKube.str(e, "objectRef", "name"),
        code == null ? 0 : Integer.parseInt(code),
        Instant.parse(e.get("requestReceivedTimestamp").getAsString()),
        Instant.parse(e.get("stageTimestamp").getAsString()),
        RawKube.str(e, "user", "username"),
        e.get("requestURI").getAsString());
  }

  /**
   * A VMI delete request, logged at level Request: by whom, with what answer, and the UID its
   * DeleteOptions' precondition named (null: none).
   */
  record VmiDelete(
      String namespace,
      String name,
      String user,
      int code,
      String preconditionUid,
      Instant received) {
    boolean succeeded() {
      return code >= 200 && code < 300;
    }
  }

  /** Every VMI delete request of the log (the policy must log them at level Request). */
  static List<VmiDelete> vmiDeletes(Path log) {
    if (!Files.exists(log)) {
      return List.of();
    }
    try (Stream<String> lines = Files.lines(log)) {
      return lines
          .map(l -> JsonParser.parseString(l).getAsJsonObject())
          .filter(
              e ->
                  "delete".equals(e.get("verb").getAsString())
                      && "virtualmachineinstances".equals(RawKube.str(e, "objectRef", "resource"))
                      && RawKube.str(e, "objectRef", "subresource") == null)
          .map(
              e -> {
                String code = RawKube.str(e, "responseStatus", "code");
                return new VmiDelete(
                    RawKube.str(e, "objectRef", "namespace"),
                    RawKube.str(e, "objectRef", "name"),
                    RawKube.str(e, "user", "username"),
                    code == null ? 0 : Integer.parseInt(code),
                    RawKube.str(e, "requestObject", "preconditions", "uid"),
                    Instant.parse(e.get("requestReceivedTimestamp").getAsString()));
              })
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The controller's requests received in [from, to), by "verb resource[/sub]", WATCH excluded. */
  public static Map<String, Integer> count(Path log, Instant from, Instant to) {
    Map<String, Integer> out = new TreeMap<>();
    for (Entry e : entries(log)) {
      if (!e.verb().equals("watch") && USER.equals(e.user()) && e.within(from, to)) {
        String what =
            e.resource() == null
                ? "(non-resource) " + e.uri().replaceAll("\\?.*", "")
                : e.resource() + (e.subresource() == null ? "" : "/" + e.subresource());
        out.merge(e.verb() + " " + what, 1, Integer::sum);
      }
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

  /** "infra `verb resource`" and "guest ..." to each count divided by {@code evacuations}. */
  static Map<String, Double> perEvacuation(
      Map<String, Integer> infra, Map<String, Integer> guest, int evacuations) {
    Map<String, Double> out = new TreeMap<>();
    infra.forEach((k, v) -> out.put("infra `" + k + "`", v / (double) evacuations));
    guest.forEach((k, v) -> out.put("guest `" + k + "`", v / (double) evacuations));
    return out;
  }

  /** One row per request kind, one column per label: its {@link #perEvacuation} counts. */
  static String requestTable(Map<String, Map<String, Double>> columns) {
    List<String> labels = List.copyOf(columns.keySet());
    Map<String, List<String>> rows = new TreeMap<>();
    columns.forEach(
        (label, counts) ->
            counts.forEach(
                (kind, v) ->
                    rows.computeIfAbsent(kind, k -> new ArrayList<>(nCopies(labels.size(), "")))
                        .set(labels.indexOf(label), Report.f("%.2f", v))));
    return Report.table(
        String.join("|", Bench.concat(List.of("request, per evacuation"), labels)),
        rows.entrySet().stream()
            .map(e -> Bench.concat(List.of(e.getKey()), e.getValue()))
            .toList());
  }

  static int total(Map<String, Integer> counts) {
    return counts.values().stream().mapToInt(Integer::intValue).sum();
  }

  /**
   * A VMI's marking stored (its last status patch before its first delete request) and that
   * request's arrival, epoch seconds; NaN where not seen.
   */
  record Evacuation(double marked, double deleteRequested) {
    static final Evacuation NONE = new Evacuation(Double.NaN, Double.NaN);

    double seconds() {
      return deleteRequested - marked;
    }
  }

  /**
   * Every VMI's {@link Evacuation} by name, of the requests received in [from, to) (the same names
   * come back in later runs).
   */
  static Map<String, Evacuation> evacuations(Path infraLog, Instant from, Instant to) {
    Map<String, Evacuation> out = new HashMap<>();
    for (Entry e : entries(infraLog)) {
      Evacuation was = out.getOrDefault(e.name(), Evacuation.NONE);
      if (!e.within(from, to) || !Double.isNaN(was.deleteRequested())) {
        continue;
      }
      if (e.vmi("status") && e.verb().equals("patch") && e.code() == 200) {
        out.put(e.name(), new Evacuation(epoch(e.completed()), Double.NaN));
      } else if (e.vmi(null) && e.verb().equals("delete") && !Double.isNaN(was.marked())) {
        out.put(e.name(), new Evacuation(was.marked(), epoch(e.received())));
      }
    }
    return out;
  }

  static double epoch(Instant at) {
    return at.getEpochSecond() + at.getNano() / 1e9;
  }

  /**
   * After a start a controller checks every Running VMI once; those requests are no evacuation's,
   * so a run starts when the logs of {@code clusters} have not grown for 3 s (at most 2 minutes).
   */
  static void awaitQuiet(Path dir, List<? extends KubeCluster> clusters) throws Exception {
    Bench.awaitQuiet(
        () -> {
          double size = 0;
          for (KubeCluster c : clusters) {
            Path log = logOf(dir, c.name());
            size += Files.exists(log) ? Files.size(log) : 0;
          }
          return size;
        },
        0,
        Duration.ZERO,
        Duration.ofMinutes(2));
  }
}
