package dev.capk.vmieviction.kube;

import com.google.gson.ExclusionStrategy;
import com.google.gson.FieldAttributes;
import com.google.gson.Gson;
import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1NodeStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1PodSpec;
import io.kubernetes.client.openapi.models.V1PodStatus;
import io.kubernetes.client.util.generic.dynamic.DynamicKubernetesTypeAdaptorFactory;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.Set;

/**
 * Reads objects in every shape the API allows. The client's generated models reject any field they
 * do not know: one field a newer API server adds to Node would make every read fail. {@link #GSON}
 * is the client's Gson setup without the strict validators, installed once per process into the
 * client, with the dynamic API's adapter (without it, dynamic objects read afterwards in the
 * process would come back empty). An object may lack its metadata, labels or annotations: {@link
 * #label} and {@link #annotation} are then null.
 */
public final class LenientJson {
  private LenientJson() {}

  private static final Set<String> UNREAD_POD_SPEC =
      Set.of("containers", "initContainers", "ephemeralContainers");

  private static final Set<String> UNREAD_POD_STATUS =
      Set.of("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses");

  /** RFC 3339 with microseconds, as the API server writes timestamps. */
  private static final DateTimeFormatter RFC3339_MICRO =
      new DateTimeFormatterBuilder()
          .parseDefaulting(ChronoField.OFFSET_SECONDS, 0)
          .append(DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss"))
          .optionalStart()
          .appendFraction(ChronoField.NANO_OF_SECOND, 6, 6, true)
          .optionalEnd()
          .appendLiteral("Z")
          .toFormatter();

  /**
   * Never read, skipped: {@code metadata.managedFields} (a third of a pod), node images, and a
   * pod's containers and their statuses (most of the rest of a pod: a drain reads a pod's owners,
   * labels, volumes, phase, conditions and deletion, never its containers). Nothing the controller
   * decodes is written back whole (patches only), so a skipped field is never erased on the server.
   */
  private static final ExclusionStrategy UNREAD =
      new ExclusionStrategy() {
        @Override
        public boolean shouldSkipField(FieldAttributes f) {
          Class<?> c = f.getDeclaringClass();
          String name = f.getName();
          return (c == V1ObjectMeta.class && name.equals("managedFields"))
              || (c == V1NodeStatus.class && name.equals("images"))
              || (c == V1PodSpec.class && UNREAD_POD_SPEC.contains(name))
              || (c == V1PodStatus.class && UNREAD_POD_STATUS.contains(name));
        }

        @Override
        public boolean shouldSkipClass(Class<?> c) {
          return false;
        }
      };

  public static final Gson GSON =
      JSON.createGson()
          .addDeserializationExclusionStrategy(UNREAD)
          .registerTypeAdapter(
              OffsetDateTime.class, new JSON.OffsetDateTimeTypeAdapter(RFC3339_MICRO))
          .registerTypeAdapter(LocalDate.class, new JSON.LocalDateTypeAdapter())
          .registerTypeAdapter(byte[].class, new JSON.ByteArrayAdapter())
          .registerTypeAdapterFactory(new DynamicKubernetesTypeAdaptorFactory())
          .create();

  /** Makes the client's own typed calls read leniently too. */
  public static void install() {
    JSON.setGson(GSON);
  }

  /** {@code json} as {@code type}; an unreadable answer becomes an ApiException that says so. */
  public static <T> T parse(String json, Class<T> type) throws ApiException {
    try {
      return GSON.fromJson(json, type);
    } catch (RuntimeException e) {
      String what = type.getSimpleName();
      throw new ApiException(
          "cannot parse the API server's answer as " + what + ": " + e.getMessage());
    }
  }

  public static String label(KubernetesObject o, String key) {
    V1ObjectMeta m = o.getMetadata();
    return m == null || m.getLabels() == null ? null : m.getLabels().get(key);
  }

  public static String annotation(KubernetesObject o, String key) {
    V1ObjectMeta m = o.getMetadata();
    return m == null || m.getAnnotations() == null ? null : m.getAnnotations().get(key);
  }
}
