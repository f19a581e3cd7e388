package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.time.GoDuration;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class ManagerFlagsTest {

  static ManagerOptions parse(String... args) {
    ManagerOptions o = new ManagerOptions();
    ManagerOptions.commandLine(o).parseArgs(args);
    return o;
  }

  @Test
  void defaultsFollowTheIssue() {
    ManagerOptions o = parse();
    assertEquals(Duration.ofMinutes(10), o.drainTimeout);
    assertEquals(Duration.ofSeconds(20), o.drainRetryInterval);
    assertEquals(Duration.ofSeconds(20), o.drainAttemptTimeout);
    assertEquals("capk.cluster.x-k8s.io/kubevirt-machine-name", o.vmiLabelSelector);
    assertEquals(List.of(), o.namespaces);
    assertEquals(":8080", o.metricsBindAddress);
    assertEquals(":8081", o.healthProbeBindAddress);
    assertEquals(List.of(), o.validate());
  }

  @Test
  void controllerRuntimeFlagNamesAndRepeatableNamespace() {
    ManagerOptions o =
        parse(
            "--kubeconfig",
            "/tmp/k",
            "--leader-elect",
            "--leader-election-namespace",
            "ns",
            "--metrics-bind-address",
            "0",
            "--health-probe-bind-address",
            "127.0.0.1:0",
            "--drain-timeout",
            "1m30s",
            "--workers",
            "8",
            "--namespace",
            "a",
            "--namespace",
            "b",
            "--default-eviction-strategy",
            "External");
    assertTrue(o.leaderElect);
    assertEquals(Duration.ofSeconds(90), o.drainTimeout);
    assertEquals(List.of("a", "b"), o.namespaces);
    assertEquals(List.of(), o.validate());
  }

  @Test
  void badValuesGetSpecificMessages() {
    ManagerOptions o =
        parse(
            "--drain-timeout",
            "0s",
            "--workers",
            "0",
            "--default-eviction-strategy",
            "Sometimes",
            "--metrics-bind-address",
            "8080");
    List<String> problems = o.validate();
    assertEquals(4, problems.size(), problems.toString());
    assertTrue(problems.get(0).startsWith("--drain-timeout"));
    assertThrows(
        CommandLine.ParameterException.class, () -> parse("--drain-timeout", "ten minutes"));
  }

  @Test
  void infraClustersIsLocalByDefaultExternalOnRequestAndNothingElse() {
    assertEquals(false, parse().externalInfra());
    assertEquals(true, parse("--infra-clusters", "external").externalInfra());
    assertEquals(List.of(), parse("--infra-clusters", "external").validate());
    assertEquals(
        List.of("--infra-clusters must be local or external, got \"remote\""),
        parse("--infra-clusters", "remote").validate());
    assertEquals(
        1,
        parse("--infra-clusters", "external", "--enable-node-maintenance").validate().size(),
        "NodeMaintenance would serve the management cluster's Nodes");
  }

  @Test
  void shardInfraClustersIsOffByDefaultAndOnlyForExternalInfraWithALeaseNamePrefixThatFitsALabel() {
    assertEquals(false, parse().shardInfraClusters);
    assertEquals(
        List.of(), parse("--infra-clusters", "external", "--shard-infra-clusters").validate());
    assertEquals(
        List.of(
            "--shard-infra-clusters shares out infra clusters: it needs --infra-clusters=external"),
        parse("--shard-infra-clusters").validate());
    List<String> problems =
        parse(
                "--infra-clusters",
                "external",
                "--shard-infra-clusters",
                "--leader-election-id",
                "Capk_Controller")
            .validate();
    assertEquals(1, problems.size(), problems.toString());
    assertTrue(problems.get(0).contains("\"Capk_Controller\""), problems.get(0));
    assertEquals(
        List.of(),
        parse("--leader-election-id", "Capk_Controller").validate(),
        "without sharding the id is only a Lease name, as before");
  }

  @Test
  void goDurationsParseAndFormat() {
    assertEquals(Duration.ofMinutes(10), GoDuration.parse("10m"));
    assertEquals(Duration.ofMinutes(90), GoDuration.parse("1h30m"));
    assertEquals(Duration.ofMillis(500), GoDuration.parse("500ms"));
    assertEquals(Duration.ofMillis(1500), GoDuration.parse("1.5s"));
    assertEquals(Duration.ofMinutes(10), parse("--drain-timeout=PT10M").drainTimeout);
    assertThrows(IllegalArgumentException.class, () -> GoDuration.parse("10"));
    assertThrows(IllegalArgumentException.class, () -> GoDuration.parse("10x"));
    assertThrows(IllegalArgumentException.class, () -> GoDuration.parse("m10"));
    assertEquals("10m0s", GoDuration.format(Duration.ofMinutes(10)));
    assertEquals("1h30m0s", GoDuration.format(Duration.ofMinutes(90)));
    assertEquals("500ms", GoDuration.format(Duration.ofMillis(500)));
    assertEquals("1.5s", GoDuration.format(Duration.ofMillis(1500)));
  }

  @Test
  void bindAddressesAsControllerRuntimeWritesThem() {
    assertEquals(new InetSocketAddress(8080), HttpEndpoints.parse(":8080"));
    assertEquals(new InetSocketAddress("127.0.0.1", 9000), HttpEndpoints.parse("127.0.0.1:9000"));
    assertTrue(HttpEndpoints.disabled("0"));
    assertThrows(IllegalArgumentException.class, () -> HttpEndpoints.parse("8080"));
    assertThrows(IllegalArgumentException.class, () -> HttpEndpoints.parse(":99999"));
  }
}
