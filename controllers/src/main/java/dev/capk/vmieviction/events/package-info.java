/**
 * Kubernetes Events as series: one Event object per object, scope and reason, updated instead of
 * repeated, with a cap per scope and outcome reasons always written. {@link
 * dev.capk.vmieviction.events.EventSeriesRecorder} decides and writes through an {@link
 * dev.capk.vmieviction.events.EventStore}. May import only {@code kube}.
 */
package dev.capk.vmieviction.events;
