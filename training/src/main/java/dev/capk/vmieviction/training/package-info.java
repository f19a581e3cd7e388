/**
 * The training run of the controller's ahead-of-time cache (JDK 25), for the image build and {@code
 * make bench}: a recorded evacuation ({@link dev.capk.vmieviction.training.Recording}, Secrets'
 * data blanked by {@link dev.capk.vmieviction.training.SecretData}) replayed to the controller's
 * jar over HTTPS and HTTP/2 on loopback ({@link dev.capk.vmieviction.training.ReplayHandler} on a
 * {@link dev.capk.vmieviction.training.LoopbackServer}), started and stopped by {@link
 * dev.capk.vmieviction.training.TrainingRun}. Imports no class of the controller: it talks to the
 * jar as an API server would, and is never part of it.
 */
package dev.capk.vmieviction.training;
