package dev.capk.vmieviction.e2e.operations;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.e2e.harness.Promtool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * The alert rules of config/prometheus and the queries of the Grafana dashboard, checked by the
 * real promtool: the rules parse, and each alert fires on synthetic series that should page and
 * stays quiet on ones that should not (config/prometheus/alerts_test.yaml). Which metrics the
 * controller really serves is checked against a running controller in DeploymentShapesIT.
 */
class AlertRulesIT {
  private final Promtool promtool = Promtool.locate();

  @TempDir Path dir;

  @Test
  void promtoolChecksTheShippedRules() {
    Path rules = MonitoringFiles.writeRulesFile(dir);
    Promtool.Result r = promtool.run(dir, "check", "rules", rules.getFileName().toString());
    assertEquals(0, r.exitCode(), r.output());
    int alerts = MonitoringFiles.rules().size();
    assertTrue(r.output().contains("SUCCESS: " + alerts + " rules found"), r.output());
  }

  @Test
  void promtoolRuleTestsPassAndEachAlertIsSeenFiringAndNotFiring() throws IOException {
    MonitoringFiles.writeRulesFile(dir);
    Files.copy(MonitoringFiles.RULE_TESTS, dir.resolve("alerts_test.yaml"));
    Promtool.Result r = promtool.run(dir, "test", "rules", "alerts_test.yaml");
    assertEquals(0, r.exitCode(), r.output());
    assertTrue(r.output().contains("SUCCESS"), r.output());

    Set<String> firing = new TreeSet<>();
    Set<String> quiet = new TreeSet<>();
    for (Map<String, Object> test : ruleTests()) {
      for (Object c : (List<?>) test.get("alert_rule_test")) {
        Map<?, ?> check = (Map<?, ?>) c;
        String alert = (String) check.get("alertname");
        List<?> expected = (List<?>) check.get("exp_alerts");
        (expected == null || expected.isEmpty() ? quiet : firing).add(alert);
      }
    }
    for (Map<String, Object> rule : MonitoringFiles.rules()) {
      String alert = (String) rule.get("alert");
      assertTrue(firing.contains(alert), alert + " is tested firing");
      assertTrue(quiet.contains(alert), alert + " is tested not firing");
    }
  }

  /** Every dashboard query is valid PromQL: promtool checks each as a recording rule. */
  @Test
  void everyDashboardQueryIsValidPromQlOnTheControllersMetrics() {
    Map<String, List<String>> panels = MonitoringFiles.dashboardQueries();
    assertFalse(panels.isEmpty());
    List<Map<String, Object>> records = new ArrayList<>();
    for (var panel : panels.entrySet()) {
      assertFalse(panel.getValue().isEmpty(), panel.getKey() + " has a query");
      for (String expr : panel.getValue()) {
        assertFalse(MonitoringFiles.metricsIn(expr).isEmpty(), panel.getKey() + ": " + expr);
        // Grafana fills in $__rate_interval; promtool needs a duration there.
        records.add(
            Map.of(
                "record",
                "dashboard:panel_" + records.size(),
                "expr",
                expr.replace("$__rate_interval", "5m")));
      }
    }
    MonitoringFiles.write(
        dir.resolve("dashboard.rules.yaml"),
        Map.of("groups", List.of(Map.of("name", "dashboard", "rules", records))));
    Promtool.Result r = promtool.run(dir, "check", "rules", "dashboard.rules.yaml");
    assertEquals(0, r.exitCode(), r.output());
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> ruleTests() {
    Map<String, Object> file = new Yaml().load(MonitoringFiles.read(MonitoringFiles.RULE_TESTS));
    return (List<Map<String, Object>>) file.get("tests");
  }
}
