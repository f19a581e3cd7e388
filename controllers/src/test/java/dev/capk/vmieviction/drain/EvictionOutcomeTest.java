package dev.capk.vmieviction.drain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.drain.SteppedDrains.EvictionOutcome;
import dev.capk.vmieviction.kube.RawApi;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Classification of eviction/deletion answers, with bodies as kube-apiserver sends them. */
class EvictionOutcomeTest {
  private static EvictionOutcome classify(int code, String body) {
    return EvictionOutcome.classify(code, body, Map.of());
  }

  private static String status(int code, String reason, String message, String causes) {
    return "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\""
        + message
        + "\",\"reason\":\""
        + reason
        + "\",\"details\":{\"causes\":["
        + causes
        + "]},\"code\":"
        + code
        + "}";
  }

  @Test
  void successIsAccepted() {
    assertEquals(
        EvictionOutcome.Kind.ACCEPTED,
        classify(201, "{\"kind\":\"Status\",\"status\":\"Success\"}").kind());
    assertEquals(EvictionOutcome.Kind.ACCEPTED, classify(200, "").kind());
  }

  @Test
  void notFoundMeansGone() {
    assertEquals(
        EvictionOutcome.Kind.GONE,
        classify(404, status(404, "NotFound", "pods \\\"web-1\\\" not found", "")).kind());
  }

  @Test
  void uidPreconditionConflictMeansReplaced() {
    EvictionOutcome o =
        classify(
            409,
            status(
                409,
                "Conflict",
                "Operation cannot be fulfilled on Pod \\\"web-0\\\": Precondition failed: UID in precondition: a, UID in object meta: b",
                ""));
    assertEquals(EvictionOutcome.Kind.REPLACED, o.kind());
  }

  @Test
  void budget429NamesTheBudgetsFromTheCauses() {
    EvictionOutcome o =
        classify(
            429,
            status(
                429,
                "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.",
                "{\"reason\":\"DisruptionBudget\",\"message\":\"The disruption budget web-pdb needs 2 healthy pods and has 2 currently\"}"));
    assertEquals(EvictionOutcome.Kind.BLOCKED, o.kind());
    assertEquals(Set.of("web-pdb"), o.budgets());
    assertTrue(o.message().startsWith("Cannot evict pod"));
  }

  @Test
  void budgetStillBeingProcessedIsBlockedToo() {
    EvictionOutcome o =
        classify(
            429,
            status(
                429,
                "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.",
                "{\"reason\":\"DisruptionBudget\",\"message\":\"The disruption budget db.pdb is still being processed by the server.\"}"));
    assertEquals(Set.of("db.pdb"), o.budgets());
  }

  @Test
  void budget429WithoutCausesIsStillBlockedWithNoNames() {
    EvictionOutcome o =
        classify(
            429,
            status(
                429,
                "TooManyRequests",
                "Cannot evict pod as it would violate the pod's disruption budget.",
                ""));
    assertEquals(EvictionOutcome.Kind.BLOCKED, o.kind());
    assertTrue(o.budgets().isEmpty());
  }

  @Test
  void priorityAndFairness429IsThrottledWithRetryAfter() {
    EvictionOutcome o =
        EvictionOutcome.classify(
            429,
            status(429, "TooManyRequests", "Too many requests, please try again later.", ""),
            Map.of("Retry-After", List.of("3")));
    assertEquals(EvictionOutcome.Kind.THROTTLED, o.kind());
    assertEquals(3, o.retryAfterSeconds());
  }

  @Test
  void namespaceTerminating403IsRecognisedByItsCause() {
    EvictionOutcome o =
        classify(
            403,
            status(
                403,
                "Forbidden",
                "pods \\\"web-1\\\" is forbidden: unable to create new content in namespace t because it is being terminated",
                "{\"reason\":\"NamespaceTerminating\",\"message\":\"namespace t is being terminated\",\"field\":\"metadata.namespace\"}"));
    assertEquals(EvictionOutcome.Kind.NAMESPACE_TERMINATING, o.kind());
    assertEquals(
        EvictionOutcome.Kind.FORBIDDEN,
        classify(403, status(403, "Forbidden", "RBAC says no", "")).kind());
  }

  @Test
  void multipleBudgets500IsItsOwnFailure() {
    EvictionOutcome o =
        classify(
            500,
            status(
                500,
                "InternalError",
                "Internal error occurred: This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                ""));
    assertEquals(EvictionOutcome.Kind.MULTIPLE_BUDGETS, o.kind());
    assertEquals(
        EvictionOutcome.Kind.TRANSIENT,
        classify(500, status(500, "InternalError", "etcd timeout", "")).kind());
  }

  @Test
  void serverUnavailableIsTransientAndBadRequestsFail() {
    assertEquals(EvictionOutcome.Kind.TRANSIENT, classify(503, "service unavailable").kind());
    assertEquals(EvictionOutcome.Kind.TRANSIENT, classify(504, "").kind());
    assertEquals(
        EvictionOutcome.Kind.FAILED, classify(422, status(422, "Invalid", "bad", "")).kind());
    assertEquals(EvictionOutcome.Kind.FORBIDDEN, classify(401, "").kind());
    assertEquals(
        EvictionOutcome.Kind.TRANSIENT, EvictionOutcome.unreachable("connection refused").kind());
  }

  @Test
  void apiStatusIsParsedLenientlyAndDescribedWithoutHeaders() {
    RawApi.Status s = RawApi.Status.parse("<html>not json</html>");
    assertEquals("<html>not json</html>", s.message());
    RawApi.Status t =
        RawApi.Status.parse(
            status(403, "Forbidden", "no", "{\"reason\":\"X\",\"message\":\"m\",\"field\":\"f\"}"));
    assertEquals("Forbidden", t.reason());
    assertEquals(
        List.of(
            new io.kubernetes.client.openapi.models.V1StatusCause()
                .reason("X")
                .message("m")
                .field("f")),
        t.causes());
    assertTrue(t.hasCause("X"));
    assertEquals(
        "HTTP 403 Forbidden: no",
        RawApi.describe(
            new io.kubernetes.client.openapi.ApiException(
                "",
                403,
                Map.of("Authorization", List.of("Bearer secret-token")),
                status(403, "Forbidden", "no", ""))));
    assertTrue(
        RawApi.describe(
                new io.kubernetes.client.openapi.ApiException(
                    new java.net.ConnectException("Connection refused")))
            .startsWith("cannot reach the API server: Connection refused"));
  }

  @Test
  void evictionSupportIsReadFromTheCoreResourceList() throws Exception {
    String withEviction =
        "{\"kind\":\"APIResourceList\",\"groupVersion\":\"v1\",\"resources\":["
            + "{\"name\":\"pods\",\"kind\":\"Pod\",\"namespaced\":true,\"verbs\":[\"get\"]},"
            + "{\"name\":\"pods/eviction\",\"group\":\"policy\",\"version\":\"v1\",\"kind\":\"Eviction\",\"namespaced\":true,\"verbs\":[\"create\"]}]}";
    assertEquals("policy/v1", parse(withEviction).orElseThrow());
    String without =
        "{\"kind\":\"APIResourceList\",\"resources\":[{\"name\":\"pods\",\"kind\":\"Pod\"},"
            + "{\"name\":\"pods/eviction\",\"kind\":\"Eviction\"}]}";
    assertTrue(parse(without).isEmpty(), "no group/version: not usable, as in kubectl");
  }

  private static java.util.Optional<String> parse(String json) throws Exception {
    return SteppedDrains.evictionGroupVersion(
        dev.capk.vmieviction.kube.LenientJson.parse(
            json, io.kubernetes.client.openapi.models.V1APIResourceList.class));
  }
}
