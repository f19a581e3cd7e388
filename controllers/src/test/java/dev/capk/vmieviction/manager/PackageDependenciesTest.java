package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The layering each package-info.java states, checked on the imports of the main code. */
class PackageDependenciesTest {

  /** Package (below dev.capk.vmieviction) to the packages of this project it may import. */
  static final Map<String, Set<String>> ALLOWED =
      Map.ofEntries(
          Map.entry("time", Set.of()),
          Map.entry("runtime", Set.of()),
          Map.entry("logging", Set.of("kube", "time")),
          Map.entry("kube", Set.of("time")),
          Map.entry("drain", Set.of("kube", "time")),
          Map.entry("drain.cli", Set.of("drain", "kube", "logging", "time")),
          Map.entry("events", Set.of("kube")),
          Map.entry("workload", Set.of("api", "kube", "time")),
          Map.entry("infra", Set.of("api", "workload")),
          Map.entry("shards", Set.of("kube", "time")),
          Map.entry(
              "eviction", Set.of("api", "drain", "events", "kube", "logging", "time", "workload")),
          Map.entry(
              "maintenance",
              Set.of("api", "drain", "events", "kube", "logging", "runtime", "time")),
          Map.entry(
              "status",
              Set.of("api", "drain.cli", "eviction", "kube", "logging", "time", "workload")));

  static final Pattern IMPORT =
      Pattern.compile("(?m)^import (?:static )?dev\\.capk\\.vmieviction\\.([a-z]+(?:\\.cli)?)\\.");

  @Test
  void eachPackageImportsOnlyWhatItsPackageInfoAllows() throws IOException {
    Path root = Path.of("src", "main", "java", "dev", "capk", "vmieviction");
    Map<String, Set<String>> violations = new TreeMap<>();
    List<Path> sources;
    try (Stream<Path> walk = Files.walk(root)) {
      sources = walk.filter(p -> p.toString().endsWith(".java")).toList();
    }
    for (Path source : sources) {
      String pkg = root.relativize(source.getParent()).toString().replace('/', '.');
      Set<String> allowed = ALLOWED.get(pkg);
      if (allowed == null) {
        continue; // manager: the wiring, may import everything
      }
      Matcher m = IMPORT.matcher(Files.readString(source));
      while (m.find()) {
        String imported = m.group(1);
        if (!imported.equals(pkg) && !allowed.contains(imported)) {
          violations
              .computeIfAbsent(source.getFileName().toString(), k -> new TreeSet<>())
              .add(imported);
        }
      }
    }
    assertEquals(Map.of(), violations, "imports a package its layer may not");
  }
}
