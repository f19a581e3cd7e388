package dev.capk.vmieviction.api.kubevirt;

import com.google.gson.annotations.SerializedName;
import java.util.List;
import java.util.Objects;

/** The part of a VMI's status the eviction controller reads. */
public class VirtualMachineInstanceStatus {

  /** Phase value of a VMI whose guest is running. */
  public static final String PHASE_RUNNING = "Running";

  /**
   * Set by KubeVirt when it refused the eviction of the VMI's pod: the name of the <em>infra</em>
   * node being drained. Never a guest node name.
   */
  @SerializedName("evacuationNodeName")
  private String evacuationNodeName;

  /** The infra node the VMI runs on. */
  @SerializedName("nodeName")
  private String nodeName;

  @SerializedName("phase")
  private String phase;

  /** Condition type KubeVirt sets to True when the VMI can be live-migrated. */
  public static final String CONDITION_LIVE_MIGRATABLE = "LiveMigratable";

  @SerializedName("conditions")
  private List<Condition> conditions;

  /** The last (or current) migration of the VMI, as virt-controller and virt-handler record it. */
  @SerializedName("migrationState")
  private MigrationState migrationState;

  public List<Condition> getConditions() {
    return conditions;
  }

  public VirtualMachineInstanceStatus conditions(List<Condition> conditions) {
    this.conditions = conditions;
    return this;
  }

  public MigrationState getMigrationState() {
    return migrationState;
  }

  public VirtualMachineInstanceStatus migrationState(MigrationState migrationState) {
    this.migrationState = migrationState;
    return this;
  }

  /** True when condition {@code type} is there with status {@code "True"}. */
  public boolean conditionTrue(String type) {
    return conditions != null
        && conditions.stream()
            .anyMatch(c -> type.equals(c.getType()) && "True".equals(c.getStatus()));
  }

  /** One {@code status.conditions} entry: type and status only. */
  public static class Condition {
    @SerializedName("type")
    private String type;

    @SerializedName("status")
    private String status;

    public String getType() {
      return type;
    }

    public Condition type(String type) {
      this.type = type;
      return this;
    }

    public String getStatus() {
      return status;
    }

    public Condition status(String status) {
      this.status = status;
      return this;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Condition other
          && Objects.equals(type, other.type)
          && Objects.equals(status, other.status);
    }

    @Override
    public int hashCode() {
      return Objects.hash(type, status);
    }
  }

  /** {@code status.migrationState}: which migration, and whether it completed or failed. */
  public static class MigrationState {
    /** The UID of the VirtualMachineInstanceMigration. */
    @SerializedName("migrationUid")
    private String migrationUid;

    @SerializedName("completed")
    private Boolean completed;

    @SerializedName("failed")
    private Boolean failed;

    public String getMigrationUid() {
      return migrationUid;
    }

    public MigrationState migrationUid(String migrationUid) {
      this.migrationUid = migrationUid;
      return this;
    }

    public boolean completed() {
      return Boolean.TRUE.equals(completed);
    }

    public MigrationState completed(Boolean completed) {
      this.completed = completed;
      return this;
    }

    public boolean failed() {
      return Boolean.TRUE.equals(failed);
    }

    public MigrationState failed(Boolean failed) {
      this.failed = failed;
      return this;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof MigrationState other
          && Objects.equals(migrationUid, other.migrationUid)
          && Objects.equals(completed, other.completed)
          && Objects.equals(failed, other.failed);
    }

    @Override
    public int hashCode() {
      return Objects.hash(migrationUid, completed, failed);
    }
  }

  public String getEvacuationNodeName() {
    return evacuationNodeName;
  }

  public void setEvacuationNodeName(String evacuationNodeName) {
    this.evacuationNodeName = evacuationNodeName;
  }

  public VirtualMachineInstanceStatus evacuationNodeName(String evacuationNodeName) {
    this.evacuationNodeName = evacuationNodeName;
    return this;
  }

  public String getNodeName() {
    return nodeName;
  }

  public void setNodeName(String nodeName) {
    this.nodeName = nodeName;
  }

  public VirtualMachineInstanceStatus nodeName(String nodeName) {
    this.nodeName = nodeName;
    return this;
  }

  public String getPhase() {
    return phase;
  }

  public void setPhase(String phase) {
    this.phase = phase;
  }

  public VirtualMachineInstanceStatus phase(String phase) {
    this.phase = phase;
    return this;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof VirtualMachineInstanceStatus other
        && Objects.equals(evacuationNodeName, other.evacuationNodeName)
        && Objects.equals(nodeName, other.nodeName)
        && Objects.equals(phase, other.phase)
        && Objects.equals(conditions, other.conditions)
        && Objects.equals(migrationState, other.migrationState);
  }

  @Override
  public int hashCode() {
    return Objects.hash(evacuationNodeName, nodeName, phase, conditions, migrationState);
  }

  @Override
  public String toString() {
    return "{evacuationNodeName="
        + evacuationNodeName
        + ", nodeName="
        + nodeName
        + ", phase="
        + phase
        + "}";
  }
}
