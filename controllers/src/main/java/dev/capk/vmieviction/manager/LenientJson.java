package dev.capk.vmieviction.manager;

import com.google.gson.Gson;
import io.kubernetes.client.openapi.JSON;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;

/**
 * Where the client falls short: its generated models reject any field they do not know, so one
 * field added to Node or Pod by a newer API server (or a guest cluster of another version) would
 * make every read fail. The controller reads partial objects by design; it installs, once per
 * process, the client's own Gson setup without the strict per-model validators.
 */
public final class LenientJson {
  private LenientJson() {}

  /** RFC 3339 with microseconds, as the client writes timestamps. */
  private static final DateTimeFormatter RFC3339_MICRO =
      new DateTimeFormatterBuilder()
          .parseDefaulting(ChronoField.OFFSET_SECONDS, 0)
          .append(DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss"))
          .optionalStart()
          .appendFraction(ChronoField.NANO_OF_SECOND, 6, 6, true)
          .optionalEnd()
          .appendLiteral("Z")
          .toFormatter();

  private static volatile boolean installed;

  public static synchronized void install() {
    if (installed) {
      return;
    }
    Gson gson =
        JSON.createGson()
            .registerTypeAdapter(OffsetDateTime.class, new JSON.OffsetDateTimeTypeAdapter(RFC3339_MICRO))
            .registerTypeAdapter(LocalDate.class, new JSON.LocalDateTypeAdapter())
            .registerTypeAdapter(byte[].class, new JSON.ByteArrayAdapter())
            .create();
    JSON.setGson(gson);
    installed = true;
  }
}
