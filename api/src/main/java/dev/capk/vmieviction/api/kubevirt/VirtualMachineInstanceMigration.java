package dev.capk.vmieviction.api.kubevirt;

import com.google.gson.annotations.SerializedName;
import dev.capk.vmieviction.api.ApiObject;
import java.util.Set;

/**
 * A partial {@code kubevirt.io/v1} VirtualMachineInstanceMigration: the VMI it moves ({@code
 * spec.vmiName}) and how far KubeVirt got ({@code status.phase}). We create these; KubeVirt's
 * virt-controller carries them out.
 */
public class VirtualMachineInstanceMigration extends ApiObject<VirtualMachineInstanceMigration> {

  public static final String PHASE_SUCCEEDED = "Succeeded";
  public static final String PHASE_FAILED = "Failed";

  /** The phases after which KubeVirt does nothing more with a migration. */
  public static final Set<String> FINAL_PHASES = Set.of(PHASE_SUCCEEDED, PHASE_FAILED);

  public VirtualMachineInstanceMigration() {
    super(KubeVirtApi.API_VERSION, KubeVirtApi.MIGRATION_KIND);
  }

  @SerializedName("spec")
  private Spec spec;

  @SerializedName("status")
  private Status status;

  public Spec getSpec() {
    return spec;
  }

  public VirtualMachineInstanceMigration spec(Spec spec) {
    this.spec = spec;
    return this;
  }

  public Status getStatus() {
    return status;
  }

  public VirtualMachineInstanceMigration status(Status status) {
    this.status = status;
    return this;
  }

  /** The phase, or null while KubeVirt has not looked at it yet. */
  public String phase() {
    return status == null ? null : status.getPhase();
  }

  /** KubeVirt is done with it (a migration just created has no phase yet: not finished). */
  public boolean finished() {
    String phase = phase();
    return phase != null && FINAL_PHASES.contains(phase);
  }

  /** {@code spec}: only the VMI's name (same namespace). */
  public static class Spec {
    @SerializedName("vmiName")
    private String vmiName;

    public String getVmiName() {
      return vmiName;
    }

    public Spec vmiName(String vmiName) {
      this.vmiName = vmiName;
      return this;
    }
  }

  /** {@code status}: only the phase. */
  public static class Status {
    @SerializedName("phase")
    private String phase;

    public String getPhase() {
      return phase;
    }

    public Status phase(String phase) {
      this.phase = phase;
      return this;
    }
  }
}
