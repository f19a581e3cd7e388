package dev.capk.vmieviction.status;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.kubevirt.KubeVirtApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.drain.cli.ConnectionOptions;
import dev.capk.vmieviction.eviction.InfraVmis;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.logging.LogbackConfigurator;
import dev.capk.vmieviction.status.EvacuationStatuses.EvacuationStatus;
import dev.capk.vmieviction.status.EvacuationStatuses.VmiEvent;
import dev.capk.vmieviction.time.GoDuration;
import io.kubernetes.client.common.KubernetesListObject;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.CoreV1EventList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code status}: the evacuations in progress, read with one paginated list of VMIs and one of VMI
 * Events, never a request per VMI. A table, {@code -o wide} or {@code -o json}; exit 0, or 1 with a
 * one-line error.
 */
@Command(
    name = "status",
    description =
        "List the VMI evacuations in progress on the infra cluster: guest cluster and node, phase,"
            + " time left to the deadline, and what blocks each.")
public final class StatusCommand implements Callable<Integer> {

  /** As a kubectl plugin, for "see --help" hints. */
  public static final String PLUGIN_NAME = "kubectl vmi-eviction status";

  /** The controller's own default {@code --drain-timeout}. */
  static final String DEFAULT_DRAIN_TIMEOUT = "10m";

  static final int PAGE = 500;

  @Mixin ConnectionOptions connection = new ConnectionOptions();

  @Option(
      names = {"-o", "--output"},
      paramLabel = "FORMAT",
      description = "Output format: wide or json (default: a table).")
  String output;

  @Option(
      names = "--drain-timeout",
      paramLabel = "DURATION",
      defaultValue = DEFAULT_DRAIN_TIMEOUT,
      description =
          "The controller's --drain-timeout: deadline = drain start + this, moved earlier by the"
              + " VMI's vmi-deletion-grace-time annotation or a DrainDeadlineShortened event"
              + " (default: ${DEFAULT-VALUE}, the controller's default).")
  String drainTimeout;

  @Option(
      names = {"-l", "--selector"},
      paramLabel = "SELECTOR",
      defaultValue = CapkLabels.DEFAULT_VMI_SELECTOR,
      description =
          "Label selector of the VMIs, as the controller's --vmi-label-selector (default:"
              + " ${DEFAULT-VALUE}).")
  String selector;

  private final PrintStream out;
  private final PrintStream err;
  private final Clock clock;

  StatusCommand(PrintStream out, PrintStream err, Clock clock) {
    this.out = out;
    this.err = err;
    this.clock = clock;
  }

  /** Runs {@code status ARGS}; the exit code. */
  public static int run(String... args) {
    return run(System.out, System.err, args);
  }

  /** Runs {@code status ARGS} (the first argument, {@code status}, included) on these streams. */
  public static int run(PrintStream out, PrintStream err, String... args) {
    CommandLine cli = new CommandLine(new StatusCommand(out, err, Clock.systemUTC()));
    cli.setOut(new PrintWriter(out, true));
    cli.setErr(new PrintWriter(err, true));
    cli.setExecutionExceptionHandler(
        (e, line, parsed) -> {
          err.println(
              "error: " + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
          return 1;
        });
    cli.setParameterExceptionHandler(
        (e, a) -> {
          err.println("error: " + e.getMessage());
          err.println("See '" + PLUGIN_NAME + " --help' for usage.");
          return 1;
        });
    int from = args.length > 0 && "status".equals(args[0]) ? 1 : 0;
    return cli.execute(java.util.Arrays.copyOfRange(args, from, args.length));
  }

  /** Failures are thrown: {@link #run} prints them as one line and exits 1. */
  @Override
  public Integer call() throws ConnectionOptions.KubeconfigException {
    LogbackConfigurator.setCliVerbosity(connection.verbosity());
    boolean wide = "wide".equals(output);
    boolean json = "json".equals(output);
    if (output != null && !wide && !json) {
      throw new IllegalArgumentException(
          "unable to match a printer suitable for the output format \""
              + output
              + "\", allowed formats are: json,wide");
    }
    Duration timeout;
    try {
      timeout = GoDuration.parse(drainTimeout);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "invalid --drain-timeout \"" + drainTimeout + "\": " + e.getMessage());
    }
    if (timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("--drain-timeout must be positive");
    }
    ApiClient client = connection.connect(System.getenv());
    LenientJson.install();
    String namespace = connection.namespace();
    List<EvacuationStatus> statuses;
    Instant now;
    try {
      List<VirtualMachineInstance> vmis = listVmis(client, namespace);
      List<VmiEvent> events = listVmiEvents(client, namespace);
      now = clock.instant();
      statuses = EvacuationStatuses.of(vmis, events, now, timeout);
    } catch (ApiException e) {
      throw new IllegalStateException(RawApi.describe(e));
    }
    if (json) {
      out.println(StatusOutput.json(statuses, now, timeout));
    } else if (statuses.isEmpty()) {
      err.println(
          namespace == null
              ? "No evacuations in progress."
              : "No evacuations in progress in namespace " + namespace + ".");
    } else {
      StatusOutput.lines(statuses, wide).forEach(out::println);
    }
    return 0;
  }

  private List<VirtualMachineInstance> listVmis(ApiClient client, String namespace)
      throws ApiException {
    ListOptions o = new ListOptions();
    o.setLabelSelector(selector == null || selector.isBlank() ? null : selector);
    return listAll(InfraVmis.api(client), namespace, o, "VMIs");
  }

  private static List<VmiEvent> listVmiEvents(ApiClient client, String namespace)
      throws ApiException {
    ListOptions o = new ListOptions();
    o.setFieldSelector("involvedObject.kind=" + KubeVirtApi.VMI_KIND);
    return listAll(
            new GenericKubernetesApi<>(
                CoreV1Event.class, CoreV1EventList.class, "", "v1", "events", client),
            namespace,
            o,
            "Events")
        .stream()
        .filter(e -> e.getInvolvedObject() != null && lastSeen(e) != null)
        .map(
            e ->
                new VmiEvent(
                    e.getInvolvedObject().getUid(), e.getReason(), e.getMessage(), lastSeen(e)))
        .toList();
  }

  /** Every object {@code options} select, in pages. */
  @SuppressWarnings("unchecked")
  private static <T extends KubernetesObject, L extends KubernetesListObject> List<T> listAll(
      GenericKubernetesApi<T, L> api, String namespace, ListOptions options, String what)
      throws ApiException {
    List<T> all = new ArrayList<>();
    String token = null;
    do {
      options.setLimit(PAGE);
      options.setContinue(token);
      var r = namespace == null ? api.list(options) : api.list(namespace, options);
      if (r.getHttpStatusCode() == 0) {
        throw new ApiException(0, "no HTTP response listing " + what);
      }
      L page = r.throwsApiException().getObject();
      if (page.getItems() != null) {
        all.addAll((List<T>) page.getItems());
      }
      token = page.getMetadata() == null ? null : page.getMetadata().getContinue();
    } while (token != null && !token.isEmpty());
    return all;
  }

  /** lastTimestamp (core/v1 series), else the series' or the event's time, else its first. */
  static Instant lastSeen(CoreV1Event e) {
    var series = e.getSeries() == null ? null : e.getSeries().getLastObservedTime();
    return Stream.of(e.getLastTimestamp(), series, e.getEventTime(), e.getFirstTimestamp())
        .filter(Objects::nonNull)
        .findFirst()
        .map(OffsetDateTime::toInstant)
        .orElse(null);
  }
}
