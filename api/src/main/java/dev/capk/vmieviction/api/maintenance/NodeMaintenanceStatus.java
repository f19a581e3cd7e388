package dev.capk.vmieviction.api.maintenance;

import com.google.gson.annotations.SerializedName;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Objects;

/**
 * The maintenance's progress, with the Node Maintenance Operator's field names (note {@code
 * totalpods}, all lower case, as that operator spells it). Written only through the status
 * subresource, with merge patches of the fields that change.
 */
public class NodeMaintenanceStatus {

  /** Running, Succeeded or Failed; see {@link NodeMaintenanceApi}. */
  @SerializedName("phase")
  private String phase;

  /** Percent of the pods to evict that are gone. */
  @SerializedName("drainProgress")
  private Integer drainProgress;

  /** When the status last changed. */
  @SerializedName("lastUpdate")
  private OffsetDateTime lastUpdate;

  /** The latest error (a blocking budget, a missing node...), if any. */
  @SerializedName("lastError")
  private String lastError;

  /** Names of the pods still to evict. */
  @SerializedName("pendingPods")
  private List<String> pendingPods;

  /** All pods on the node when maintenance started. */
  @SerializedName("totalpods")
  private Integer totalpods;

  /** Pods to evict when maintenance started. */
  @SerializedName("evictionPods")
  private Integer evictionPods;

  /**
   * Kept for compatibility with the Node Maintenance Operator (its node lease errors); unused here.
   */
  @SerializedName("errorOnLeaseCount")
  private Integer errorOnLeaseCount;

  public String getPhase() {
    return phase;
  }

  public void setPhase(String phase) {
    this.phase = phase;
  }

  public NodeMaintenanceStatus phase(String phase) {
    this.phase = phase;
    return this;
  }

  public Integer getDrainProgress() {
    return drainProgress;
  }

  public void setDrainProgress(Integer drainProgress) {
    this.drainProgress = drainProgress;
  }

  public NodeMaintenanceStatus drainProgress(Integer drainProgress) {
    this.drainProgress = drainProgress;
    return this;
  }

  public OffsetDateTime getLastUpdate() {
    return lastUpdate;
  }

  public void setLastUpdate(OffsetDateTime lastUpdate) {
    this.lastUpdate = lastUpdate;
  }

  public NodeMaintenanceStatus lastUpdate(OffsetDateTime lastUpdate) {
    this.lastUpdate = lastUpdate;
    return this;
  }

  public String getLastError() {
    return lastError;
  }

  public void setLastError(String lastError) {
    this.lastError = lastError;
  }

  public NodeMaintenanceStatus lastError(String lastError) {
    this.lastError = lastError;
    return this;
  }

  public List<String> getPendingPods() {
    return pendingPods;
  }

  public void setPendingPods(List<String> pendingPods) {
    this.pendingPods = pendingPods;
  }

  public NodeMaintenanceStatus pendingPods(List<String> pendingPods) {
    this.pendingPods = pendingPods;
    return this;
  }

  public Integer getTotalpods() {
    return totalpods;
  }

  public void setTotalpods(Integer totalpods) {
    this.totalpods = totalpods;
  }

  public NodeMaintenanceStatus totalpods(Integer totalpods) {
    this.totalpods = totalpods;
    return this;
  }

  public Integer getEvictionPods() {
    return evictionPods;
  }

  public void setEvictionPods(Integer evictionPods) {
    this.evictionPods = evictionPods;
  }

  public NodeMaintenanceStatus evictionPods(Integer evictionPods) {
    this.evictionPods = evictionPods;
    return this;
  }

  public Integer getErrorOnLeaseCount() {
    return errorOnLeaseCount;
  }

  public void setErrorOnLeaseCount(Integer errorOnLeaseCount) {
    this.errorOnLeaseCount = errorOnLeaseCount;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof NodeMaintenanceStatus other
        && Objects.equals(phase, other.phase)
        && Objects.equals(drainProgress, other.drainProgress)
        && Objects.equals(lastUpdate, other.lastUpdate)
        && Objects.equals(lastError, other.lastError)
        && Objects.equals(pendingPods, other.pendingPods)
        && Objects.equals(totalpods, other.totalpods)
        && Objects.equals(evictionPods, other.evictionPods)
        && Objects.equals(errorOnLeaseCount, other.errorOnLeaseCount);
  }

  @Override
  public int hashCode() {
    return Objects.hash(
        phase,
        drainProgress,
        lastUpdate,
        lastError,
        pendingPods,
        totalpods,
        evictionPods,
        errorOnLeaseCount);
  }

  @Override
  public String toString() {
    return "{phase="
        + phase
        + ", drainProgress="
        + drainProgress
        + ", totalpods="
        + totalpods
        + ", evictionPods="
        + evictionPods
        + ", pendingPods="
        + pendingPods
        + ", lastError="
        + lastError
        + ", lastUpdate="
        + lastUpdate
        + "}";
  }
}
