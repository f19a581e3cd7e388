package dev.capk.vmieviction.training;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A recorded evacuation: what the controller asked of the API servers (infra and guest) through one
 * evacuation, and what they answered, watch streams line by line. JSON lines, one record each:
 *
 * <ul>
 *   <li>{@code header}: when the recording started, and the controller's flags;
 *   <li>{@code exchange}: a request (target, key) and its answer (status, content type, body), or
 *       the start of a watch ({@code watch: true}, no body);
 *   <li>{@code line}: a line of a watch's answer, with its time from the watch's start and the
 *       request to the same target that preceded it (its trigger); {@code end} when the server
 *       ended the watch.
 * </ul>
 *
 * A target is who was asked: {@code infra}, or {@code guest:<namespace>/<secret>} for the guest
 * cluster of that kubeconfig Secret. Secrets' data is never recorded (see {@link SecretData}).
 */
public final class Recording {
  /** The recording the training jar carries. */
  public static final String RESOURCE = "evacuation.jsonl";

  public static final String INFRA = "infra";

  /** Query parameters whose value differs between a recording and its replay, answer unchanged. */
  private static final Set<String> IGNORED_PARAMETERS = Set.of("resourceVersion", "timeoutSeconds");

  public record Header(Instant started, List<String> controllerFlags) {}

  /** A request's answer; for a watch, its lines follow in {@link Recording#lines}. */
  public record Exchange(
      long id,
      String target,
      String key,
      int status,
      String contentType,
      String body,
      boolean watch) {
    /** A write the controller made: the replay is complete once each is made again. */
    boolean isWrite() {
      return !key.startsWith("GET ") && !key.contains("/events");
    }
  }

  /**
   * A line of watch {@code watch}'s answer ({@code end}: the server ended it), {@code atMs} after
   * the watch started, following the {@code afterN}th request {@code afterKey} to the same target
   * (null: none before it).
   */
  public record Line(
      long watch, long atMs, String afterKey, int afterN, String text, boolean end) {}

  public final Header header;
  public final List<Exchange> exchanges;
  public final Map<Long, List<Line>> lines;

  Recording(Header header, List<Exchange> exchanges, Map<Long, List<Line>> lines) {
    this.header = header;
    this.exchanges = exchanges;
    this.lines = lines;
  }

  /**
   * What identifies a request across a recording and its replay: method, path and the query's
   * parameters in order, without those that name a moment ({@link #IGNORED_PARAMETERS}).
   */
  public static String key(String method, String path, String rawQuery) {
    String query =
        rawQuery == null || rawQuery.isEmpty()
            ? ""
            : Arrays.stream(rawQuery.split("&"))
                .filter(p -> !IGNORED_PARAMETERS.contains(p.split("=", 2)[0]))
                .sorted()
                .collect(Collectors.joining("&"));
    return method + " " + path + (query.isEmpty() ? "" : "?" + query);
  }

  public static Recording read(InputStream in) throws IOException {
    Header header = null;
    List<Exchange> exchanges = new ArrayList<>();
    Map<Long, List<Line>> lines = new LinkedHashMap<>();
    BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    for (String text; (text = reader.readLine()) != null; ) {
      if (text.isBlank()) {
        continue;
      }
      JsonObject o = JsonParser.parseString(text).getAsJsonObject();
      switch (o.get("type").getAsString()) {
        case "header" -> header = header(o);
        case "exchange" -> exchanges.add(exchange(o));
        case "line" -> {
          Line l = line(o);
          lines.computeIfAbsent(l.watch(), w -> new ArrayList<>()).add(l);
        }
        default -> throw new IOException("unknown record type in the recording: " + o.get("type"));
      }
    }
    if (header == null) {
      throw new IOException("the recording has no header");
    }
    return new Recording(header, exchanges, lines);
  }

  private static Header header(JsonObject o) {
    List<String> flags = new ArrayList<>();
    o.getAsJsonArray("controllerFlags").forEach(f -> flags.add(f.getAsString()));
    return new Header(Instant.parse(o.get("started").getAsString()), List.copyOf(flags));
  }

  private static Exchange exchange(JsonObject o) {
    return new Exchange(
        o.get("id").getAsLong(),
        o.get("target").getAsString(),
        o.get("key").getAsString(),
        o.get("status").getAsInt(),
        o.has("contentType") ? o.get("contentType").getAsString() : "application/json",
        o.has("body") ? o.get("body").getAsString() : "",
        o.has("watch") && o.get("watch").getAsBoolean());
  }

  private static Line line(JsonObject o) {
    return new Line(
        o.get("watch").getAsLong(),
        o.get("atMs").getAsLong(),
        o.has("afterKey") ? o.get("afterKey").getAsString() : null,
        o.has("afterN") ? o.get("afterN").getAsInt() : 0,
        o.has("text") ? o.get("text").getAsString() : "",
        o.has("end") && o.get("end").getAsBoolean());
  }

  /** Records written one per line; the methods are safe to call from many threads. */
  public static final class Writer implements AutoCloseable {
    private final java.io.Writer out;

    public Writer(java.nio.file.Path file, Header header) throws IOException {
      out = java.nio.file.Files.newBufferedWriter(file, StandardCharsets.UTF_8);
      JsonObject o = record("header");
      o.addProperty("started", header.started().toString());
      com.google.gson.JsonArray flags = new com.google.gson.JsonArray();
      header.controllerFlags().forEach(flags::add);
      o.add("controllerFlags", flags);
      write(o);
    }

    public void exchange(Exchange e) throws IOException {
      JsonObject o = record("exchange");
      o.addProperty("id", e.id());
      o.addProperty("target", e.target());
      o.addProperty("key", e.key());
      o.addProperty("status", e.status());
      o.addProperty("contentType", e.contentType());
      if (e.watch()) {
        o.addProperty("watch", true);
      } else {
        o.addProperty("body", e.body());
      }
      write(o);
    }

    public void line(Line l) throws IOException {
      JsonObject o = record("line");
      o.addProperty("watch", l.watch());
      o.addProperty("atMs", l.atMs());
      if (l.afterKey() != null) {
        o.addProperty("afterKey", l.afterKey());
        o.addProperty("afterN", l.afterN());
      }
      if (l.end()) {
        o.addProperty("end", true);
      } else {
        o.addProperty("text", l.text());
      }
      write(o);
    }

    private static JsonObject record(String type) {
      JsonObject o = new JsonObject();
      o.addProperty("type", type);
      return o;
    }

    private synchronized void write(JsonObject o) throws IOException {
      out.write(o.toString());
      out.write('\n');
    }

    @Override
    public synchronized void close() throws IOException {
      out.close();
    }
  }
}
