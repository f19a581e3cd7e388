package dev.capk.vmieviction.e2e.bench;

/** A controller process under measurement, ours or a peer: its PID (for /proc), and its stop. */
interface MeasuredController extends AutoCloseable {
  long pid();

  @Override
  void close();
}
