package dev.capk.vmieviction.kube;

import java.util.logging.Logger;
import okhttp3.OkHttpClient;
import okhttp3.internal.concurrent.TaskRunner;

/**
 * The threads that serve an HTTP client's connections, as virtual threads.
 *
 * <p>Why: OkHttp gives every HTTP/2 connection a reader that blocks on the socket for the
 * connection's whole life (and a task for its pings), on a platform thread of its shared task
 * runner. The controller opens one connection per guest cluster client, because each tenant's
 * client certificate makes its own TLS identity, so a thousand tenants evacuating at once meant a
 * thousand platform threads, each with its stack, doing nothing but wait (docs/benchmarks.md, "A
 * thousand tenants at once"). On virtual threads such a wait costs a small heap object.
 *
 * <p>OkHttp 5 takes a task runner per client only through its Kotlin-internal builder method
 * ({@code taskRunner$okhttp}); it is public in the bytecode, so an OkHttp upgrade that drops it
 * fails this class's compilation, not silently at run time. The HTTP/2 reader's blocking calls
 * (socket reads under JDK locks, {@code synchronized} blocks) do not pin a carrier on JDK 24 and
 * later.
 */
public final class ConnectionThreads {
  private ConnectionThreads() {}

  /** One for every client given it: its threads come and go with the connections' tasks. */
  static final TaskRunner VIRTUAL =
      new TaskRunner(
          new TaskRunner.RealBackend(Thread.ofVirtual().name("okhttp-virtual-", 0).factory()),
          Logger.getLogger(TaskRunner.class.getName()));

  /** {@code http} with its connections' readers and pings on virtual threads. */
  public static OkHttpClient.Builder virtual(OkHttpClient.Builder http) {
    return http.taskRunner$okhttp(VIRTUAL);
  }
}
