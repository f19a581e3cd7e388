package dev.capk.vmieviction.training;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * Answers the controller as the recording says the API servers did. The caller's bearer token names
 * the target (infra, or a guest cluster); the nth request of a key gets the nth recorded answer
 * (the last again past them). A watch's lines are sent in order, each once the request that
 * preceded it in the recording has come this often, or at the latest {@link #LATE} after its
 * recorded time; then the watch ends where the server ended it, else stays open. A request the
 * recording does not hold gets a 404 Status, and is counted.
 */
final class ReplayHandler extends Handler.Abstract {
  /** How late after its recorded time a line whose trigger has not come is sent anyway. */
  static final Duration LATE = Duration.ofSeconds(2);

  private static final String NOT_RECORDED =
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
          + "\"message\":\"not in the recording\",\"reason\":\"NotFound\",\"code\":404}";

  private final Recording recording;
  private final Duration late;
  private final Duration shift;
  private final Function<String, String> kubeconfigs;
  private final Map<String, List<Recording.Exchange>> answers = new HashMap<>();
  private final Map<String, Integer> writesToReplay = new LinkedHashMap<>();

  /** Requests seen per target and key; guarded by itself, notified on each. */
  private final Map<String, Integer> seen = new HashMap<>();

  private final List<String> notRecorded = new ArrayList<>();

  /**
   * @param kubeconfigs the kubeconfig to put into a kubeconfig Secret ("namespace/name")
   */
  ReplayHandler(Recording recording, Function<String, String> kubeconfigs) {
    this(recording, kubeconfigs, LATE);
  }

  ReplayHandler(Recording recording, Function<String, String> kubeconfigs, Duration late) {
    this.recording = recording;
    this.late = late;
    this.kubeconfigs = kubeconfigs;
    List<String> texts = new ArrayList<>();
    recording.exchanges.forEach(e -> texts.add(e.body()));
    recording.lines.values().forEach(ls -> ls.forEach(l -> texts.add(l.text())));
    Instant latest = Timestamps.latest(texts);
    this.shift =
        Duration.between(latest == null ? recording.header.started() : latest, Instant.now());
    for (Recording.Exchange e : recording.exchanges) {
      String at = e.target() + " " + e.key();
      answers.computeIfAbsent(at, k -> new ArrayList<>()).add(e);
      if (e.isWrite()) {
        writesToReplay.merge(at, 1, Integer::sum);
      }
    }
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    String target = LoopbackServer.token(request.getHeaders().get(HttpHeader.AUTHORIZATION));
    String key =
        Recording.key(
            request.getMethod(), request.getHttpURI().getPath(), request.getHttpURI().getQuery());
    Content.Source.consumeAll(request);
    String at = target + " " + key;
    int n = count(at);
    List<Recording.Exchange> recorded = answers.get(at);
    if (recorded == null) {
      synchronized (notRecorded) {
        notRecorded.add(at);
      }
      answer(response, callback, 404, "application/json", NOT_RECORDED);
      return true;
    }
    Recording.Exchange e = recorded.get(Math.min(n, recorded.size()) - 1);
    if (!e.watch()) {
      answer(response, callback, e.status(), e.contentType(), replayed(e.body()));
    } else if (n > recorded.size()) {
      hold(response, e);
    } else {
      stream(response, callback, e, target);
    }
    return true;
  }

  private int count(String at) {
    synchronized (seen) {
      int n = seen.merge(at, 1, Integer::sum);
      seen.notifyAll();
      return n;
    }
  }

  private String replayed(String body) {
    return SecretData.fill(Timestamps.shift(body, shift), kubeconfigs);
  }

  private static void answer(
      Response response, Callback callback, int status, String contentType, String body) {
    response.setStatus(status);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
    Content.Sink.write(response, true, body, callback);
  }

  /** A watch past those recorded: open, silent, until the client or the server ends it. */
  private static void hold(Response response, Recording.Exchange e) {
    response.setStatus(e.status());
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, e.contentType());
    response.write(false, java.nio.ByteBuffer.allocate(0), Callback.NOOP);
  }

  private void stream(Response response, Callback callback, Recording.Exchange e, String target)
      throws IOException {
    response.setStatus(e.status());
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, e.contentType());
    long started = System.nanoTime();
    OutputStream out = Content.Sink.asOutputStream(response);
    out.flush();
    for (Recording.Line l : recording.lines.getOrDefault(e.id(), List.of())) {
      awaitTrigger(target, l, started);
      if (l.end()) {
        out.close();
        callback.succeeded();
        return;
      }
      out.write((replayed(l.text()) + "\n").getBytes(StandardCharsets.UTF_8));
      out.flush();
    }
    // Recorded open to its end: stays open (the callback left pending) until one side ends it.
  }

  /** Waits until line {@code l}'s trigger has come, or its recorded time plus {@link #late}. */
  private void awaitTrigger(String target, Recording.Line l, long started) {
    long recordedAt = started + Duration.ofMillis(l.atMs()).toNanos();
    long latest = recordedAt + (l.afterKey() == null ? 0 : late.toNanos());
    String trigger = target + " " + l.afterKey();
    synchronized (seen) {
      for (long now = System.nanoTime(); now < latest; now = System.nanoTime()) {
        if (l.afterKey() != null && seen.getOrDefault(trigger, 0) >= l.afterN()) {
          return;
        }
        try {
          seen.wait(Math.max(1, Duration.ofNanos(latest - now).toMillis()));
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /** The recorded writes (Events apart) not yet made this often, "target key: seen/recorded". */
  List<String> writesMissing() {
    List<String> missing = new ArrayList<>();
    synchronized (seen) {
      writesToReplay.forEach(
          (at, times) -> {
            int made = seen.getOrDefault(at, 0);
            if (made < times) {
              missing.add(at + ": " + made + "/" + times);
            }
          });
    }
    return missing;
  }

  /** Waits until every recorded write has been made again, or {@code timeout}; true if so. */
  boolean awaitWrites(Duration timeout) throws InterruptedException {
    long end = System.nanoTime() + Math.max(0, timeout.toNanos());
    synchronized (seen) {
      while (!writesMissing().isEmpty()) {
        long left = end - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        seen.wait(Math.max(1, Duration.ofNanos(left).toMillis()));
      }
      return true;
    }
  }

  int requests() {
    synchronized (seen) {
      return seen.values().stream().mapToInt(Integer::intValue).sum();
    }
  }

  List<String> notRecorded() {
    synchronized (notRecorded) {
      return List.copyOf(notRecorded);
    }
  }
}
