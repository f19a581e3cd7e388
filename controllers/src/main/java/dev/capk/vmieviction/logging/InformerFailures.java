package dev.capk.vmieviction.logging;

import dev.capk.vmieviction.kube.WatchListApi;
import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.ListerWatcher;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.util.CallGeneratorParams;
import io.kubernetes.client.util.Watchable;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.function.BiConsumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

/**
 * The failures of one informer's list and watch. The client's reflector lists again a second after
 * any failure, for ever (a CRD not installed: a request and a log line a second). Here failures
 * back off the next list (1 s, doubling up to {@link #MAX_RETRY}), are logged at the 1st, 2nd, 4th,
 * 8th... with a count, and at once when the reason changes (the backoff restarts: a CRD just
 * installed is seen soon); a watch opened again ends them. A list refused (403) waits the refusal
 * pause, if given, logged at INFO. Use: {@code factory.sharedIndexInformerFor(failures.lists(api,
 * ...), type, resync, failures.handler())}.
 */
public final class InformerFailures {

  private static final Logger log = LoggerFactory.getLogger(InformerFailures.class);

  static final Duration FIRST_RETRY = Duration.ofSeconds(1);

  /**
   * How long a streaming list may take before it counts as not streamed: a server before 1.27 sends
   * the state without its end, and waits out this bound.
   */
  static final Duration STREAMED_LIST_BOUND = Duration.ofSeconds(30);

  /** Objects per list page: a few megabytes of JSON at a time. */
  static final int LIST_PAGE_SIZE = 500;

  /** The longest pause between lists while they fail: a CRD installed later is seen within it. */
  static final Duration MAX_RETRY = Duration.ofSeconds(30);

  record Told(Level level, String line) {}

  private final String informer;
  private final LongSupplier nanoTime;
  private final Clock clock;
  private final Duration refusedPause; // null: a refusal is a failure as any

  private int sameReason; // failures in a row with the same reason: the backoff (0: none failing)
  private long nextListAt; // nanoTime before which no list is sent (while failing)
  private String reason; // the failure being counted, described
  private Instant since; // when the first failure of that reason happened
  private int total; // failures since the last watch opened, whatever their reason
  private Instant firstOfAll;

  /**
   * @param informer which one, as log context ({@code kind=Cluster namespace=all})
   * @param refusedPause how long after a refused list (403) the next one is sent; null: no pause
   */
  public InformerFailures(String informer, Duration refusedPause) {
    this(informer, System::nanoTime, Clock.systemUTC(), refusedPause);
  }

  InformerFailures(String informer, LongSupplier nanoTime, Clock clock, Duration refusedPause) {
    this.informer = informer;
    this.refusedPause = refusedPause;
    this.nanoTime = nanoTime;
    this.clock = clock;
  }

  /**
   * Lists and watches {@code api} in one namespace ("" for all), only what {@code selectors} select
   * (the client's informers on a {@code GenericKubernetesApi} take none), each object trimmed as it
   * arrives; lists only once the backoff allows, and a watch opened ends the failures. A list is a
   * streaming list ({@link WatchListApi#streamedList}), or pages of a consistent list where the
   * server does not stream: the list drops the requested resourceVersion, since with "0" the API
   * server answers from its cache in one piece, ignoring the page size.
   */
  public <T extends KubernetesObject, L extends KubernetesListObject> ListerWatcher<T, L> lists(
      WatchListApi<T, L> api, String namespace, ListOptions selectors, UnaryOperator<T> trim) {
    Function<CallGeneratorParams, ListOptions> options =
        params -> {
          ListOptions o = new ListOptions();
          o.setResourceVersion(params.resourceVersion);
          o.setTimeoutSeconds(params.timeoutSeconds);
          String labels = selectors.getLabelSelector();
          o.setLabelSelector(labels == null || labels.isBlank() ? null : labels);
          o.setFieldSelector(selectors.getFieldSelector());
          return o;
        };
    return new ListerWatcher<>() {
      /** The server refused or ignored a streaming list: pages from then on. */
      private volatile boolean streamRefused;

      @Override
      public L list(CallGeneratorParams params) throws ApiException {
        if (!mayList()) {
          throw new NotYet();
        }
        ListOptions o = options.apply(params);
        o.setResourceVersion(null);
        if (!streamRefused) {
          Optional<L> streamed =
              api.streamedList(
                  namespace, o.getLabelSelector(), o.getFieldSelector(), trim, STREAMED_LIST_BOUND);
          if (streamed.isPresent()) {
            return streamed.get();
          }
          streamRefused = true;
          log.info("{} lists in pages: the API server does not stream lists (WatchList)", informer);
        }
        return listAll(api, namespace, o, trim);
      }

      @Override
      public Watchable<T> watch(CallGeneratorParams params) throws ApiException {
        ListOptions o = options.apply(params);
        Watchable<T> w = namespace.isEmpty() ? api.watch(o) : api.watch(namespace, o);
        opened().ifPresent(InformerFailures::log);
        return w;
      }
    };
  }

  /**
   * Every object {@code options} select in {@code namespace} ("" or null: all namespaces), page by
   * page, each trimmed as its page arrives: the first page, whose resourceVersion is the whole
   * list's, holding them all.
   */
  @SuppressWarnings("unchecked")
  public static <T extends KubernetesObject, L extends KubernetesListObject> L listAll(
      GenericKubernetesApi<T, L> api, String namespace, ListOptions options, UnaryOperator<T> trim)
      throws ApiException {
    L all = null;
    String token = null;
    do {
      options.setLimit(LIST_PAGE_SIZE);
      options.setContinue(token);
      boolean everywhere = namespace == null || namespace.isEmpty();
      var r = everywhere ? api.list(options) : api.list(namespace, options);
      if (r.getHttpStatusCode() == 0) {
        throw new ApiException(0, "no HTTP response to a list");
      }
      L page = r.throwsApiException().getObject();
      List<T> items = page.getItems() == null ? List.of() : (List<T>) page.getItems();
      items.forEach(trim::apply);
      if (all == null) {
        all = page;
      } else {
        ((List<T>) all.getItems()).addAll(items);
      }
      token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (token != null && !token.isEmpty());
    return all;
  }

  public <T> BiConsumer<Class<T>, Throwable> handler() {
    return (type, e) -> failed(e).ifPresent(InformerFailures::log);
  }

  synchronized boolean mayList() {
    return sameReason == 0 || nanoTime.getAsLong() - nextListAt >= 0;
  }

  /** The line to log for a failure, if any. */
  synchronized Optional<Told> failed(Throwable e) {
    if (e instanceof NotYet) {
      return Optional.empty();
    }
    Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS);
    total++;
    firstOfAll = firstOfAll == null ? now : firstOfAll;
    if (refusedPause != null && e instanceof ApiException a && a.getCode() == 403) {
      sameReason = Math.max(sameReason, 1);
      nextListAt = nanoTime.getAsLong() + refusedPause.toNanos();
      return Optional.of(
          new Told(
              Level.INFO,
              "informer cache off %s reason=list refused (HTTP 403, RBAC) reads=GET retryIn=%s"
                  .formatted(informer, refusedPause)));
    }
    String described = describe(e);
    // Something changed (a CRD installed is first "storage initializing"): look again soon.
    boolean changed = !described.equals(reason);
    sameReason = changed ? 1 : sameReason + 1;
    since = changed ? now : since;
    reason = described;
    Duration pause = backoff(sameReason);
    nextListAt = nanoTime.getAsLong() + pause.toNanos();
    if (!changed && Integer.bitCount(sameReason) != 1) {
      return Optional.empty();
    }
    String count = changed ? "" : sameReason + " times since " + since + " ";
    return Optional.of(
        new Told(
            Level.WARN,
            "informer list/watch failed %s%s error=\"%s\" retryIn=%s"
                .formatted(count, informer, described, pause)));
  }

  synchronized Optional<Told> opened() {
    if (sameReason == 0) {
      return Optional.empty();
    }
    Told told =
        new Told(
            Level.INFO,
            "informer list/watch recovered %s failures=%d since=%s"
                .formatted(informer, total, firstOfAll));
    sameReason = 0;
    total = 0;
    reason = null;
    since = null;
    firstOfAll = null;
    return Optional.of(told);
  }

  /** After the {@code n}th failure in a row: 1 s, 2 s, 4 s... */
  static Duration backoff(int n) {
    Duration d = FIRST_RETRY.multipliedBy(1L << Math.min(n - 1, 16));
    return d.compareTo(MAX_RETRY) > 0 ? MAX_RETRY : d;
  }

  /** Never server text or a URL. */
  static String describe(Throwable t) {
    if (t instanceof ApiException a) {
      if (a.getCode() == 404) {
        return "HTTP 404: the API server does not serve this kind"
            + " (is its CustomResourceDefinition installed?)";
      }
      if (a.getCode() != 0) {
        return "HTTP " + a.getCode();
      }
      return a.getCause() == null ? "no response" : a.getCause().getClass().getSimpleName();
    }
    return t.getClass().getSimpleName();
  }

  private static void log(Told told) {
    log.atLevel(told.level()).log(told.line());
  }

  /** A list not sent: the backoff is not over (the reflector calls again a second later). */
  static final class NotYet extends ApiException {
    NotYet() {
      super(0, "backing off after failed lists, not listing yet");
    }
  }
}
