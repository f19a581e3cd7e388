package dev.capk.vmieviction.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The class list the class-data-sharing archive is dumped from (src/main/cds/classes.lst): recorded
 * from a start-up and an evacuation, and not stale. A class it names that the code no longer has
 * would be skipped by the dump in silence, and the archive would cover less than it says.
 */
class CdsClassListTest {
  static final Path LIST = Path.of("src", "main", "cds", "classes.lst");

  /** The classes the list names (not its comments or lambda lines), in the JVM's a/b/C form. */
  static List<String> listedClasses() throws IOException {
    return Files.readAllLines(LIST).stream()
        .filter(l -> !l.isBlank() && !l.startsWith("#") && !l.startsWith("@"))
        .map(l -> l.split("\\s+")[0])
        .toList();
  }

  @Test
  void everyClassOfOursThatTheListNamesStillExists() throws IOException {
    List<String> missing = new ArrayList<>();
    for (String name : listedClasses()) {
      if (!name.startsWith("dev/capk/vmieviction/")) {
        continue;
      }
      try {
        Class.forName(name.replace('/', '.'), false, getClass().getClassLoader());
      } catch (ClassNotFoundException e) {
        missing.add(name);
      }
    }
    assertEquals(
        List.of(),
        missing,
        "classes.lst names classes the code no longer has: record it again (make cds-classlist)");
  }

  @Test
  void theListWasRecordedFromAnEvacuationNotOnlyAStartUp() throws IOException {
    Set<String> listed = listedClasses().stream().collect(Collectors.toSet());
    for (String evacuationPath :
        List.of(
            "dev/capk/vmieviction/manager/Main",
            "dev/capk/vmieviction/eviction/Evacuator",
            "dev/capk/vmieviction/eviction/Guest",
            "dev/capk/vmieviction/drain/SteppedDrains",
            "dev/capk/vmieviction/drain/SteppedDrains$Evictor",
            "dev/capk/vmieviction/drain/SteppedDrains$NodePodWatch",
            "dev/capk/vmieviction/drain/NodeWatch$BudgetWatch",
            "sun/security/ssl/SSLSocketImpl")) {
      assertTrue(listed.contains(evacuationPath), "classes.lst lacks " + evacuationPath);
    }
  }
}
