package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.kube.LenientJson;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which refused pods a budget records as evicted but not deleted; objects as the API holds them.
 */
class StrandedEvictionsTest {
  private static final Instant NOW = Instant.parse("2026-11-27T10:01:00Z");

  private static V1PodDisruptionBudget budget(String statusJson) throws Exception {
    return LenientJson.parse(
        """
        {"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
         "metadata":{"name":"web","namespace":"app","generation":1},
         "spec":{"minAvailable":2,"selector":{"matchLabels":{"app":"web"}}},
         "status":%s}
        """
            .formatted(statusJson),
        V1PodDisruptionBudget.class);
  }

  private static V1Pod pod(String name, String namespace, String created, String extraMeta)
      throws Exception {
    return LenientJson.parse(
        """
        {"apiVersion":"v1","kind":"Pod",
         "metadata":{"name":"%s","namespace":"%s","uid":"u-%1$s","creationTimestamp":"%s"%s},
         "spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]}}
        """
            .formatted(name, namespace, created, extraMeta),
        V1Pod.class);
  }

  private static List<String> names(List<V1Pod> pods) {
    return pods.stream().map(p -> p.getMetadata().getName()).toList();
  }

  @Test
  void aLivePodRecordedAsEvictedWithinTheLastMinuteIsStranded() throws Exception {
    V1PodDisruptionBudget b =
        budget(
            """
            {"observedGeneration":1,"disruptionsAllowed":0,"currentHealthy":2,"desiredHealthy":2,
             "expectedPods":3,"disruptedPods":{"web-1":"2026-11-27T10:00:30Z"}}
            """);
    List<V1Pod> pods =
        List.of(
            pod("web-1", "app", "2026-11-27T09:00:00Z", ""),
            pod("web-2", "app", "2026-11-27T09:00:00Z", ""));
    assertEquals(
        List.of("web-1"), names(StrandedEvictions.find(b, pods, NOW, StrandedEvictions.FRESH)));
  }

  @Test
  void recordsThatMayExpireBeforeTheDeletionLandsAreLeftToTheBudgetController() throws Exception {
    V1PodDisruptionBudget b =
        budget("{\"disruptedPods\":{\"web-1\":\"2026-11-27T10:00:00Z\"}}"); // 60 s old
    List<V1Pod> pods = List.of(pod("web-1", "app", "2026-11-27T09:00:00Z", ""));
    assertTrue(StrandedEvictions.find(b, pods, NOW, StrandedEvictions.FRESH).isEmpty());
    // Without an upper bound (a budget watch's copy, asking whether a fresh read is worth it).
    assertEquals(List.of("web-1"), names(StrandedEvictions.find(b, pods, NOW, null)));
  }

  @Test
  void aPodBeingDeletedOrASuccessorUnderTheSameNameOrAnotherNamespacesPodIsNotStranded()
      throws Exception {
    V1PodDisruptionBudget b =
        budget(
            "{\"disruptedPods\":{\"web-1\":\"2026-11-27T10:00:30Z\",\"web-2\":\"2026-11-27T10:00:30Z\","
                + "\"web-3\":\"2026-11-27T10:00:30Z\"}}");
    List<V1Pod> pods =
        List.of(
            pod(
                "web-1",
                "app",
                "2026-11-27T09:00:00Z",
                ",\"deletionTimestamp\":\"2026-11-27T10:00:31Z\",\"deletionGracePeriodSeconds\":30"),
            // A StatefulSet's successor, created after the record of its predecessor.
            pod("web-2", "app", "2026-11-27T10:00:40Z", ""),
            pod("web-3", "other", "2026-11-27T09:00:00Z", ""));
    assertTrue(StrandedEvictions.find(b, pods, NOW, StrandedEvictions.FRESH).isEmpty());
  }

  @Test
  void aRecordOfTheLastSecondsMayBeAnEvictionUnderWayAndIsLeftAlone() throws Exception {
    V1PodDisruptionBudget b = budget("{\"disruptedPods\":{\"web-1\":\"2026-11-27T10:00:57Z\"}}");
    List<V1Pod> pods = List.of(pod("web-1", "app", "2026-11-27T09:00:00Z", ""));
    assertTrue(StrandedEvictions.find(b, pods, NOW, StrandedEvictions.FRESH).isEmpty());
    assertTrue(StrandedEvictions.find(b, pods, NOW, null).isEmpty());
  }

  @Test
  void aBudgetWithoutStatusOrRecordsStrandsNothing() throws Exception {
    V1Pod p = pod("web-1", "app", "2026-11-27T09:00:00Z", "");
    V1PodDisruptionBudget noStatus =
        LenientJson.parse(
            "{\"metadata\":{\"name\":\"web\",\"namespace\":\"app\"},\"spec\":{}}",
            V1PodDisruptionBudget.class);
    assertTrue(
        StrandedEvictions.find(noStatus, List.of(p), NOW, StrandedEvictions.FRESH).isEmpty());
    assertTrue(
        StrandedEvictions.find(
                budget("{\"disruptionsAllowed\":0}"), List.of(p), NOW, StrandedEvictions.FRESH)
            .isEmpty());
  }

  @Test
  void theServersTimeComesFromItsDateHeaderAndNoHeaderMeansNoJudgement() throws Exception {
    assertEquals(
        Instant.parse("2026-11-27T10:01:00Z"),
        StrandedEvictions.serverTime(Map.of("Date", List.of("Fri, 27 Nov 2026 10:01:00 GMT")))
            .orElseThrow());
    assertTrue(StrandedEvictions.serverTime(Map.of()).isEmpty());
    assertTrue(StrandedEvictions.serverTime(Map.of("date", List.of("yesterday"))).isEmpty());
  }
}
