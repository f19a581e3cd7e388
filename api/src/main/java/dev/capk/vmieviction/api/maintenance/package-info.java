/**
 * The NodeMaintenance API ({@code nodemaintenance.medik8s.io/v1beta1}) as Java types: spec, status
 * and list. No logic; may import only {@code api}.
 */
package dev.capk.vmieviction.api.maintenance;
