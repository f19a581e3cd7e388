package dev.capk.vmieviction.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.kubernetes.client.openapi.ApiException;
import java.net.ConnectException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DescribeEndpointTest {

  @Test
  void noAnswerNamesTheServersHostAndPortNeverItsUserInfoOrPath() {
    ApiException refused = new ApiException(new ConnectException("Failed to connect"));
    assertEquals(
        "ConnectException from 10.0.0.5:6443",
        RawApi.describeWithoutServerText(refused, "https://10.0.0.5:6443"));
    String withUserInfo =
        RawApi.describeWithoutServerText(
            refused, "https://admin:s3cr3t-t0ken@api.tenant.example/k8s?token=abc");
    assertEquals("ConnectException from api.tenant.example:443", withUserInfo);
    assertFalse(withUserInfo.contains("s3cr3t"));
    assertEquals(
        "ConnectException from [::1]:80",
        RawApi.describeWithoutServerText(refused, "http://[::1]"));
    assertEquals(
        "ConnectException from a server URL that cannot be parsed",
        RawApi.describeWithoutServerText(refused, "https://bad host:x"));
  }

  @Test
  void anAnswerIsTheHttpStatusAlone() {
    ApiException answered = new ApiException(503, Map.of(), "secret echo: " + List.of("x"));
    assertEquals("HTTP 503", RawApi.describeWithoutServerText(answered, "https://10.0.0.5:6443"));
  }
}
