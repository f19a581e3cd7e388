package dev.capk.vmieviction.e2e.harness;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/** Reads and answers admission.k8s.io/v1 AdmissionReviews, for webhooks served by tests. */
public final class AdmissionReviews {
  private AdmissionReviews() {}

  /** The review's {@code request} object. */
  public static JsonObject request(HttpExchange exchange) throws IOException {
    return JsonParser.parseString(
            new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8))
        .getAsJsonObject()
        .getAsJsonObject("request");
  }

  /** A {@code response} for {@code request}: its uid and the verdict. */
  public static JsonObject response(JsonObject request, boolean allowed) {
    JsonObject response = new JsonObject();
    response.addProperty("uid", request.get("uid").getAsString());
    response.addProperty("allowed", allowed);
    return response;
  }

  /** Sends {@code response} wrapped in an AdmissionReview. */
  public static void answer(HttpExchange exchange, JsonObject response) throws IOException {
    JsonObject review = new JsonObject();
    review.addProperty("apiVersion", "admission.k8s.io/v1");
    review.addProperty("kind", "AdmissionReview");
    review.add("response", response);
    byte[] body = review.toString().getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(200, body.length);
    try (OutputStream os = exchange.getResponseBody()) {
      os.write(body);
    }
  }
}
