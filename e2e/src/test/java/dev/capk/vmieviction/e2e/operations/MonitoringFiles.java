package dev.capk.vmieviction.e2e.operations;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import dev.capk.vmieviction.e2e.harness.RepoPaths;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * The monitoring files config/ ships: the PrometheusRule's rule groups (as the plain rules file
 * promtool reads) and the Grafana dashboard's panel queries.
 */
final class MonitoringFiles {
  static final Path RULE = RepoPaths.root().resolve("config/prometheus/prometheus_rule.yaml");
  static final Path RULE_TESTS = RepoPaths.root().resolve("config/prometheus/alerts_test.yaml");
  static final Path DASHBOARD =
      RepoPaths.root().resolve("config/grafana/vmi-eviction-dashboard.json");

  private static final Pattern OUR_METRIC = Pattern.compile("\\bvmi_eviction_[a-z0-9_]+\\b");

  private MonitoringFiles() {}

  /** The PrometheusRule's {@code spec}: {@code groups:}, the format of a Prometheus rules file. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> ruleGroups() {
    Map<String, Object> rule = new Yaml().load(read(RULE));
    return (Map<String, Object>) rule.get("spec");
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> rules() {
    List<Map<String, Object>> out = new ArrayList<>();
    for (Object g : (List<Object>) ruleGroups().get("groups")) {
      for (Object r : (List<Object>) ((Map<String, Object>) g).get("rules")) {
        out.add((Map<String, Object>) r);
      }
    }
    return out;
  }

  /** Writes the rule groups as a plain rules file {@code dir/alerts.rules.yaml}. */
  static Path writeRulesFile(Path dir) {
    return write(dir.resolve("alerts.rules.yaml"), ruleGroups());
  }

  /** Panel title to its queries. */
  static Map<String, List<String>> dashboardQueries() {
    JsonObject dashboard = JsonParser.parseString(read(DASHBOARD)).getAsJsonObject();
    Map<String, List<String>> out = new LinkedHashMap<>();
    for (JsonElement p : dashboard.getAsJsonArray("panels")) {
      JsonObject panel = p.getAsJsonObject();
      List<String> exprs = new ArrayList<>();
      for (JsonElement t : panel.getAsJsonArray("targets")) {
        exprs.add(t.getAsJsonObject().get("expr").getAsString());
      }
      out.put(panel.get("title").getAsString(), exprs);
    }
    return out;
  }

  /** The controller's metric names (vmi_eviction_*) a query reads. */
  static Set<String> metricsIn(String expr) {
    Set<String> out = new TreeSet<>();
    Matcher m = OUR_METRIC.matcher(expr);
    while (m.find()) {
      out.add(m.group());
    }
    return out;
  }

  static Path write(Path file, Object yaml) {
    DumperOptions options = new DumperOptions();
    options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, new Yaml(options).dump(yaml));
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
