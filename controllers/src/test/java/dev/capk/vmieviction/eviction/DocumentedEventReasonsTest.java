package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.capk.vmieviction.workload.GuestAccessException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The users' list of VMI event reasons (docs/operations.md) is exactly what the code can emit. */
class DocumentedEventReasonsTest {

  @Test
  void everyVmiEventReasonTheCodeEmitsIsDocumentedAndNoOther() throws Exception {
    Set<String> emitted = new TreeSet<>();
    for (Field f : VmiEvents.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
        emitted.add((String) f.get(null));
      }
    }
    // The reasons only the catalog uses are in its entries.
    Arrays.stream(VmiEvents.Told.values())
        .filter(t -> t.reason != null)
        .forEach(t -> emitted.add(t.reason));
    // A guest access failure is evented with its reason's name.
    Arrays.stream(GuestAccessException.Reason.values()).map(Enum::name).forEach(emitted::add);

    String doc = Files.readString(Path.of("..", "docs", "operations.md"));
    int start = doc.indexOf("### On VMIs");
    int end = doc.indexOf("### ", start + 4);
    Set<String> documented = new TreeSet<>();
    Matcher row =
        Pattern.compile("(?m)^\\| `([A-Za-z]+)` \\| (Normal|Warning) \\|")
            .matcher(doc.substring(start, end));
    while (row.find()) {
      documented.add(row.group(1));
    }

    assertEquals(emitted, documented);
  }
}
