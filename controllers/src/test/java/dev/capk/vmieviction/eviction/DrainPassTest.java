package dev.capk.vmieviction.eviction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.DrainStep;
import dev.capk.vmieviction.drain.PodRef;
import dev.capk.vmieviction.eviction.Guest.DrainPass;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** What a drain step says is still on the node, for the deadline's warning. */
class DrainPassTest {

  /**
   * A pass as the reconciler reads it, from pods named {@code namespace/name}: {@code pending} pods
   * in all (those named first), the first {@code terminating} of them being deleted. The summary is
   * the step's own.
   */
  static DrainPass pass(
      boolean complete,
      int evicted,
      int pending,
      Map<String, Set<String>> blockingBudgets,
      List<String> failures,
      List<String> refusals,
      String summary,
      int terminating,
      Optional<Instant> nextTry,
      Map<String, String> podsLeft) {
    Map<PodRef, Set<String>> budgets = new TreeMap<>();
    blockingBudgets.forEach((pod, b) -> budgets.put(pod(pod), b));
    Map<PodRef, String> failed = new TreeMap<>();
    failures.forEach(
        f -> failed.put(pod(f.substring(0, f.indexOf(": "))), f.substring(f.indexOf(": ") + 2)));
    Map<PodRef, String> waiting = new TreeMap<>();
    podsLeft.forEach((pod, why) -> waiting.put(pod(pod), why));
    Set<PodRef> named = new LinkedHashSet<>(waiting.keySet());
    named.addAll(budgets.keySet());
    named.addAll(failed.keySet());
    List<PodRef> left = new ArrayList<>(named);
    for (int i = 0; left.size() < pending; i++) {
      left.add(pod("ns/pending-" + i));
    }
    return new DrainPass(
        new DrainStep(
            complete,
            evicted,
            0,
            List.of(),
            left.subList(0, pending),
            left.subList(0, terminating),
            budgets,
            failed,
            Set.of(),
            Map.of(),
            nextTry,
            waiting),
        refusals);
  }

  private static PodRef pod(String namespaceAndName) {
    String[] parts = namespaceAndName.split("/", 2);
    return new PodRef(parts[0], parts[1], null);
  }

  static DrainPass left(int pending, Map<String, String> podsLeft) {
    return pass(
        false, 0, pending, Map.of(), List.of(), List.of(), "s", 0, Optional.empty(), podsLeft);
  }

  @Test
  void namesEachPodLeftWithWhyItStays() {
    assertEquals(
        "shop/cache-0 (terminating behind finalizer example.com/keep); shop/web-0 (eviction"
            + " refused by PodDisruptionBudget shop/web-pdb)",
        left(
                2,
                Map.of(
                    "shop/web-0", "eviction refused by PodDisruptionBudget shop/web-pdb",
                    "shop/cache-0", "terminating behind finalizer example.com/keep"))
            .stillThere());
  }

  @Test
  void namesTenPodsThenCountsTheOthers() {
    Map<String, String> pods = new TreeMap<>();
    for (int i = 0; i < 12; i++) {
      pods.put("shop/p-" + (char) ('a' + i), "terminating behind finalizer example.com/keep");
    }
    String text = left(12, pods).stillThere();
    assertEquals(10, text.split("terminating behind").length - 1, text);
    assertEquals(
        "shop/p-j (terminating behind finalizer example.com/keep); and 2 more",
        text.substring(text.indexOf("shop/p-j")),
        text);
    assertEquals(false, text.contains("shop/p-k"), text);
  }

  @Test
  void aLongReasonIsCutNotTheList() {
    String text = left(1, Map.of("shop/a", "x".repeat(500))).stillThere();
    assertEquals("shop/a (" + "x".repeat(DrainPass.MAX_REASON) + "...)", text);
  }

  @Test
  void longReasonsNameFewerPodsSoThatTheCountIsNeverCutFromTheEvent() {
    Map<String, String> pods = new TreeMap<>();
    for (int i = 0; i < 10; i++) {
      pods.put("shop/p-" + i, "eviction failed: " + "y".repeat(200));
    }
    String text = left(10, pods).stillThere();
    assertTrue(text.length() <= DrainPass.MAX_NAMED_TEXT + " and 10 more".length() + 2, text);
    int named = text.split("eviction failed").length - 1;
    assertTrue(named >= 1 && named < 10, text);
    assertTrue(text.endsWith("; and " + (10 - named) + " more"), text);
  }

  @Test
  void withoutPodsNamedItSaysWhatItKnows() {
    assertEquals("2 pod(s) still terminating", left(2, Map.of()).stillThere());
    assertEquals(
        "drain refused: cannot delete: ns/x",
        pass(
                false,
                0,
                1,
                Map.of(),
                List.of(),
                List.of("cannot delete: ns/x"),
                "s",
                0,
                Optional.empty(),
                Map.of())
            .stillThere());
  }
}
