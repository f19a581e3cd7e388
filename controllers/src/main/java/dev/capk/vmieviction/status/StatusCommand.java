package dev.capk.vmieviction.status;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.kubevirt.KubeVirtApi;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import dev.capk.vmieviction.drain.cli.ConnectionOptions;
import dev.capk.vmieviction.drain.cli.NodeCli;
import dev.capk.vmieviction.eviction.InfraVmis;
import dev.capk.vmieviction.kube.LenientJson;
import dev.capk.vmieviction.kube.RawApi;
import dev.capk.vmieviction.logging.InformerFailures;
import dev.capk.vmieviction.status.EvacuationStatuses.EvacuationStatus;
import dev.capk.vmieviction.status.EvacuationStatuses.VmiEvent;
import dev.capk.vmieviction.time.GoDuration;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.CoreV1Event;
import io.kubernetes.client.openapi.models.CoreV1EventList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.kubernetes.client.util.generic.options.ListOptions;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
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
    name = "kubectl vmi-eviction status",
    description =
        "List the VMI evacuations in progress on the infra cluster: guest cluster and node, phase,"
            + " time left to the deadline, and what blocks each.")
public final class StatusCommand implements Callable<Integer> {

  @Mixin ConnectionOptions connection = new ConnectionOptions();

  @Option(
      names = {"-o", "--output"},
      paramLabel = "FORMAT",
      description = "Output format: wide or json (default: a table).")
  String output;

  @Option(
      names = "--drain-timeout",
      paramLabel = "DURATION",
      defaultValue = "10m",
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

  StatusCommand(PrintStream out, PrintStream err) {
    this.out = out;
    this.err = err;
  }

  /** Runs {@code status ARGS} (the first argument, {@code status}, included) on these streams. */
  public static int run(PrintStream out, PrintStream err, String... args) {
    int from = args.length > 0 && "status".equals(args[0]) ? 1 : 0;
    return NodeCli.execute(
        new CommandLine(new StatusCommand(out, err)),
        out,
        err,
        Arrays.copyOfRange(args, from, args.length));
  }

  /** Failures are thrown: {@link NodeCli#execute} prints them as one line and exits 1. */
  @Override
  public Integer call() {
    if (output != null && !output.equals("wide") && !output.equals("json")) {
      throw new IllegalArgumentException(
          "unable to match a printer suitable for the output format \"%s\", allowed formats are:"
                  .formatted(output)
              + " json,wide");
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
    // Its two lists go one after the other.
    ApiClient client = connection.connect(System.getenv(), true);
    LenientJson.install();
    String namespace = connection.namespace();
    ListOptions vmiOptions = new ListOptions();
    vmiOptions.setLabelSelector(selector == null || selector.isBlank() ? null : selector);
    ListOptions eventOptions = new ListOptions();
    eventOptions.setFieldSelector("involvedObject.kind=" + KubeVirtApi.VMI_KIND);
    List<VirtualMachineInstance> vmis;
    List<CoreV1Event> events;
    try {
      vmis =
          InformerFailures.listAll(InfraVmis.api(client), namespace, vmiOptions, v -> v).getItems();
      events =
          InformerFailures.listAll(
                  new GenericKubernetesApi<>(
                      CoreV1Event.class, CoreV1EventList.class, "", "v1", "events", client),
                  namespace,
                  eventOptions,
                  e -> e)
              .getItems();
    } catch (ApiException e) {
      throw new IllegalStateException(RawApi.describe(e));
    } finally {
      ConnectionOptions.close(client);
    }
    Instant now = Instant.now();
    List<EvacuationStatus> statuses =
        EvacuationStatuses.of(
            vmis,
            events.stream().filter(e -> e.getInvolvedObject() != null).map(VmiEvent::new).toList(),
            now,
            timeout);
    if ("json".equals(output)) {
      out.println(StatusOutput.json(statuses, now, timeout));
    } else if (statuses.isEmpty()) {
      err.println(
          "No evacuations in progress"
              + (namespace == null ? "." : " in namespace " + namespace + "."));
    } else {
      StatusOutput.lines(statuses, "wide".equals(output)).forEach(out::println);
    }
    return 0;
  }
}
