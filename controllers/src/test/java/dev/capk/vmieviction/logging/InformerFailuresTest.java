package dev.capk.vmieviction.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.kube.WatchListApi;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ListMeta;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SecretList;
import io.kubernetes.client.openapi.models.V1Status;
import io.kubernetes.client.util.CallGeneratorParams;
import io.kubernetes.client.util.Watchable;
import io.kubernetes.client.util.generic.KubernetesApiResponse;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.slf4j.event.Level;

class InformerFailuresTest {

  static final ApiException NOT_FOUND = new ApiException(404, "not found");

  final AtomicLong nanos = new AtomicLong(1_000);
  final InformerFailures failures =
      new InformerFailures(
          "kind=NodeMaintenance namespace=all",
          nanos::get,
          Clock.fixed(Instant.parse("2026-11-26T14:00:00Z"), ZoneOffset.UTC),
          null);

  /** The reflector's loop, a second per round: lists when the backoff allows, fails with 404. */
  List<String> failForSeconds(int seconds) {
    List<String> lines = new ArrayList<>();
    for (int s = 0; s < seconds; s++) {
      if (failures.mayList()) {
        failures.failed(NOT_FOUND).map(InformerFailures.Told::line).ifPresent(lines::add);
      }
      nanos.addAndGet(Duration.ofSeconds(1).toNanos());
    }
    return lines;
  }

  @Test
  void aRefusedListIsNotSentAgainBeforeThePauseAndAGrantIsSeenAfterIt() {
    InformerFailures paced =
        new InformerFailures(
            "kind=Cluster namespace=all", nanos::get, Clock.systemUTC(), Duration.ofMinutes(5));
    assertTrue(paced.mayList(), "the first list goes out");
    Optional<InformerFailures.Told> told = paced.failed(new ApiException(403, "forbidden"));
    assertEquals(Level.INFO, told.orElseThrow().level());
    assertTrue(told.get().line().startsWith("informer cache off kind=Cluster"), told.get().line());
    nanos.addAndGet(Duration.ofMinutes(4).toNanos());
    assertFalse(paced.mayList(), "the informer's retries a second later send nothing");
    nanos.addAndGet(Duration.ofMinutes(1).toNanos());
    assertTrue(paced.mayList(), "after the pause, the list is tried again");
    paced.opened();
    assertTrue(paced.mayList());
  }

  @Test
  void repeatedIdenticalFailuresAreToldAtTheFirstThenWithACountAtTheSecondFourthAndEighth() {
    List<String> lines = new ArrayList<>();
    for (int i = 1; i <= 9; i++) {
      failures.failed(NOT_FOUND).map(InformerFailures.Told::line).ifPresent(lines::add);
    }

    assertEquals(4, lines.size(), String.join("\n", lines));
    assertTrue(
        lines
            .get(0)
            .startsWith(
                "informer list/watch failed kind=NodeMaintenance namespace=all error=\"HTTP 404:"),
        lines.get(0));
    assertTrue(lines.get(0).contains("CustomResourceDefinition installed?"), lines.get(0));
    assertTrue(
        lines.get(1).startsWith("informer list/watch failed 2 times since 2026-11-26T14:00:00Z"));
    assertTrue(lines.get(2).startsWith("informer list/watch failed 4 times since"));
    assertTrue(lines.get(3).startsWith("informer list/watch failed 8 times since"));
  }

  @Test
  void listsBackOffSoThatHalfAMinuteOfFailuresCostsAFewListsAndFewerLines() {
    List<String> lines = failForSeconds(31);

    // Lists at 0, 1, 3, 7 and 15 s, where the client alone sends 31.
    List<String> counted = lines.stream().filter(l -> l.contains(" times since ")).toList();
    assertEquals(3, lines.size(), String.join("\n", lines));
    assertEquals(2, counted.size(), String.join("\n", lines));
    assertTrue(counted.get(1).contains("failed 4 times"), counted.get(1));
    assertTrue(counted.get(1).endsWith("retryIn=PT8S"), counted.get(1));
  }

  @Test
  void theBackoffDoublesFromOneSecondAndStopsAtItsMaximum() {
    assertEquals(Duration.ofSeconds(1), InformerFailures.backoff(1));
    assertEquals(Duration.ofSeconds(2), InformerFailures.backoff(2));
    assertEquals(Duration.ofSeconds(16), InformerFailures.backoff(5));
    assertEquals(InformerFailures.MAX_RETRY, InformerFailures.backoff(6));
    assertEquals(InformerFailures.MAX_RETRY, InformerFailures.backoff(1_000));
  }

  @Test
  void aChangedReasonIsToldAtOnceAndTheBackoffStartsAgain() {
    failForSeconds(8); // four 404s: the next list 8 s later

    Optional<InformerFailures.Told> changed = failures.failed(new ApiException(429, "busy"));

    assertTrue(changed.isPresent());
    assertTrue(changed.get().line().contains("error=\"HTTP 429\""), changed.get().line());
    assertTrue(changed.get().line().endsWith("retryIn=PT1S"), changed.get().line());
    nanos.addAndGet(Duration.ofSeconds(1).toNanos());
    assertTrue(failures.mayList(), "a changed answer is looked at again a second later");
    assertTrue(failures.failed(new ApiException(429, "busy")).isPresent(), "the 2nd of a reason");
    assertTrue(failures.failed(new ApiException(429, "busy")).isEmpty(), "the 3rd of a reason");
  }

  @Test
  void aWatchOpenedEndsTheFailuresOnceWithTheirCountAndTheNextFailureIsToldAfresh()
      throws ApiException {
    failForSeconds(8);
    ListerWatcher<V1Secret, V1SecretList> guarded = lists(new AtomicInteger(), 200);
    nanos.addAndGet(InformerFailures.MAX_RETRY.toNanos());
    assertTrue(failures.mayList());
    CallGeneratorParams params = new CallGeneratorParams(false, "0", null);
    guarded.list(params);
    guarded.watch(params);
    assertTrue(failures.opened().isEmpty(), "the watch opened ended the failures already");

    Optional<InformerFailures.Told> next = failures.failed(NOT_FOUND);
    assertTrue(next.isPresent());
    assertFalse(next.get().line().contains(" times since "), next.get().line());
    assertEquals(Level.WARN, next.get().level());
    assertFalse(failures.mayList(), "backs off from one second again");
    nanos.addAndGet(Duration.ofSeconds(1).toNanos());
    assertTrue(failures.mayList());
  }

  @Test
  void theRecoveryLineSaysHowManyFailuresThereWereSinceWhen() {
    failForSeconds(8); // lists at 0, 1, 3, 7
    Optional<InformerFailures.Told> recovered = failures.opened();
    assertTrue(recovered.isPresent());
    assertEquals(Level.INFO, recovered.get().level());
    assertEquals(
        "informer list/watch recovered kind=NodeMaintenance namespace=all failures=4"
            + " since=2026-11-26T14:00:00Z",
        recovered.get().line());
    assertTrue(failures.opened().isEmpty(), "said once");
  }

  @Test
  void whileBackingOffTheGuardSendsNoListAndItsRefusalIsNeitherCountedNorTold() {
    AtomicInteger lists = new AtomicInteger();
    ListerWatcher<V1Secret, V1SecretList> guarded = lists(lists, 404);
    CallGeneratorParams params = new CallGeneratorParams(false, "0", null);
    ApiException first = assertThrows(ApiException.class, () -> guarded.list(params));
    assertTrue(failures.failed(first).isPresent());
    ApiException held = assertThrows(ApiException.class, () -> guarded.list(params));

    assertEquals(1, lists.get(), "no request while backing off");
    assertTrue(failures.failed(held).isEmpty());
    nanos.addAndGet(Duration.ofSeconds(1).toNanos());
    ApiException second = assertThrows(ApiException.class, () -> guarded.list(params));
    assertEquals(2, lists.get());
    assertTrue(
        failures.failed(second).orElseThrow().line().contains("failed 2 times"),
        "the refusal without a request was not counted");
  }

  /**
   * The failures' lists of an API server whose lists answer {@code code} (200: an empty list),
   * counted in {@code lists}, and whose watches open and never deliver.
   */
  ListerWatcher<V1Secret, V1SecretList> lists(AtomicInteger lists, int code) {
    return failures.lists(
        api(lists, code, new AtomicInteger(), Optional.empty()),
        "",
        new ListOptions(),
        UnaryOperator.identity());
  }

  @Test
  void aStreamedListIsTheListAndNoPageIsAskedFor() throws Exception {
    AtomicInteger pages = new AtomicInteger();
    AtomicInteger streams = new AtomicInteger();
    V1SecretList state = new V1SecretList().metadata(new V1ListMeta().resourceVersion("42"));
    var lw =
        failures.lists(
            api(pages, 200, streams, Optional.of(state)),
            "",
            new ListOptions(),
            UnaryOperator.identity());

    assertEquals(
        "42",
        lw.list(new CallGeneratorParams(false, null, null)).getMetadata().getResourceVersion());
    lw.list(new CallGeneratorParams(false, null, null));

    assertEquals(2, streams.get(), "each list streams");
    assertEquals(0, pages.get(), "no page asked for");
  }

  @Test
  void aServerThatDoesNotStreamIsListedInPagesFromThenOnWithoutAskingAgain() throws Exception {
    AtomicInteger pages = new AtomicInteger();
    AtomicInteger streams = new AtomicInteger();
    var lw =
        failures.lists(
            api(pages, 200, streams, Optional.empty()),
            "",
            new ListOptions(),
            UnaryOperator.identity());

    lw.list(new CallGeneratorParams(false, null, null));
    lw.list(new CallGeneratorParams(false, null, null));

    assertEquals(1, streams.get(), "asked to stream once");
    assertEquals(2, pages.get(), "then pages, each list");
  }

  /**
   * An API server whose paged lists answer {@code code} (200: an empty list), counted in {@code
   * pages}, whose streaming lists answer {@code streamed} (empty: it does not stream), counted in
   * {@code streams}, and whose watches open and never deliver.
   */
  static WatchListApi<V1Secret, V1SecretList> api(
      AtomicInteger pages, int code, AtomicInteger streams, Optional<V1SecretList> streamed) {
    return new WatchListApi<>(
        V1Secret.class, V1SecretList.class, "", "v1", "secrets", new ApiClient()) {
      @Override
      public KubernetesApiResponse<V1SecretList> list(ListOptions o) {
        pages.incrementAndGet();
        return code == 200
            ? new KubernetesApiResponse<>(new V1SecretList().metadata(new V1ListMeta()))
            : new KubernetesApiResponse<>(new V1Status().code(code), code);
      }

      @Override
      public Optional<V1SecretList> streamedList(
          String namespace,
          String labels,
          String fields,
          UnaryOperator<V1Secret> trim,
          Duration bound) {
        streams.incrementAndGet();
        return streamed;
      }

      @Override
      public Watchable<V1Secret> watch(ListOptions o) {
        return null;
      }
    };
  }
}
