package dev.capk.vmieviction.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RecordingTest {
  @Test
  void keyDropsTheParametersThatNameAMomentAndSortsTheRest() {
    assertEquals(
        "GET /api/v1/pods?fieldSelector=spec.nodeName%3Dn&watch=true",
        Recording.key(
            "GET",
            "/api/v1/pods",
            "watch=true&resourceVersion=123&timeoutSeconds=317&fieldSelector=spec.nodeName%3Dn"));
    assertEquals("DELETE /apis/x/v1/y", Recording.key("DELETE", "/apis/x/v1/y", null));
    assertEquals("GET /api/v1/", Recording.key("GET", "/api/v1/", ""));
  }

  @Test
  void writtenRecordsReadBackInOrderWithTheirWatchLines(@TempDir Path dir) throws IOException {
    Path file = dir.resolve("r.jsonl");
    Instant started = Instant.parse("2026-11-27T21:00:00Z");
    try (Recording.Writer w =
        new Recording.Writer(file, new Recording.Header(started, List.of("--workers=16")))) {
      w.exchange(
          new Recording.Exchange(1, "infra", "GET /a", 200, "application/json", "{}", false));
      w.exchange(
          new Recording.Exchange(
              2, "infra", "GET /a?watch=true", 200, "application/json", "", true));
      w.line(new Recording.Line(2, 10, null, 0, "{\"type\":\"ADDED\"}", false));
      w.line(new Recording.Line(2, 20, "POST /b", 3, "", true));
    }
    Recording r = Recording.read(Files.newInputStream(file));
    assertEquals(started, r.header.started());
    assertEquals(List.of("--workers=16"), r.header.controllerFlags());
    assertEquals(2, r.exchanges.size());
    assertEquals("{}", r.exchanges.get(0).body());
    assertTrue(r.exchanges.get(1).watch());
    List<Recording.Line> lines = r.lines.get(2L);
    assertNull(lines.get(0).afterKey());
    assertEquals("{\"type\":\"ADDED\"}", lines.get(0).text());
    assertEquals("POST /b", lines.get(1).afterKey());
    assertEquals(3, lines.get(1).afterN());
    assertTrue(lines.get(1).end());
  }

  @Test
  void writesOtherThanEventsAreWhatAReplayMustMakeAgain() {
    assertTrue(
        exchange("DELETE /apis/kubevirt.io/v1/namespaces/a/virtualmachineinstances/v").isWrite());
    assertTrue(exchange("POST /api/v1/namespaces/a/pods/p/eviction").isWrite());
    assertFalse(exchange("POST /api/v1/namespaces/a/events").isWrite());
    assertFalse(exchange("PATCH /api/v1/namespaces/a/events/e").isWrite());
    assertFalse(exchange("GET /api/v1/nodes/n").isWrite());
  }

  @Test
  void aRecordingWithoutAHeaderOrWithAnUnknownRecordIsRefused() {
    assertThrows(IOException.class, () -> Recording.read(in("")));
    assertThrows(
        IOException.class,
        () ->
            Recording.read(
                in(
                    "{\"type\":\"header\",\"started\":\"2026-11-27T21:00:00Z\",\"controllerFlags\":[]}\n"
                        + "{\"type\":\"surprise\"}\n")));
  }

  private static Recording.Exchange exchange(String key) {
    return new Recording.Exchange(1, "infra", key, 200, "application/json", "", false);
  }

  private static ByteArrayInputStream in(String s) {
    return new ByteArrayInputStream(s.getBytes(StandardCharsets.UTF_8));
  }
}
