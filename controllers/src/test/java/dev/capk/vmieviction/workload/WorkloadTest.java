package dev.capk.vmieviction.workload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.api.CapkLabels;
import dev.capk.vmieviction.api.kubevirt.VirtualMachineInstance;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class WorkloadTest {

  @Nested
  class ClusterOfAVmi {
    VirtualMachineInstance vmi(Map<String, String> labels) {
      return new VirtualMachineInstance()
          .metadata(new V1ObjectMeta().namespace("vmi-ns").name("vm").labels(labels));
    }

    GuestClusterRef resolve(TenantMapping policy, Map<String, String> labels)
        throws GuestAccessException {
      return policy.clusterOf(vmi(labels));
    }

    GuestAccessException.Reason refusal(TenantMapping policy, Map<String, String> labels) {
      return assertThrows(GuestAccessException.class, () -> resolve(policy, labels)).reason();
    }

    @Test
    void byDefaultTheClusterIsTheOneInTheVmisOwnNamespace() throws Exception {
      TenantMapping policy = TenantMapping.local(false, List.of());
      assertEquals(
          new GuestClusterRef("vmi-ns", "guest"),
          resolve(policy, Map.of(CapkLabels.CLUSTER_NAME, "guest")));
      assertEquals(
          new GuestClusterRef("vmi-ns", "guest"),
          resolve(
              policy,
              Map.of(
                  CapkLabels.CLUSTER_NAME,
                  "guest",
                  CapkLabels.KUBEVIRT_MACHINE_NAMESPACE,
                  "vmi-ns")));
    }

    @Test
    void aMachineNamespaceLabelNamingAnotherNamespaceIsRefusedUnlessAllowed() throws Exception {
      Map<String, String> crossing =
          Map.of(
              CapkLabels.CLUSTER_NAME,
              "guest",
              CapkLabels.KUBEVIRT_MACHINE_NAMESPACE,
              "other-tenant");
      assertEquals(
          GuestAccessException.Reason.ClusterNamespaceRefused,
          refusal(TenantMapping.local(false, List.of()), crossing));
      assertEquals(
          GuestAccessException.Reason.ClusterNamespaceRefused,
          refusal(
              TenantMapping.local(false, List.of("vmi-ns=capi-ns", "elsewhere=other-tenant")),
              crossing),
          "a pair for another namespace does not allow this one");
      assertEquals(
          new GuestClusterRef("other-tenant", "guest"),
          resolve(TenantMapping.local(false, List.of("vmi-ns=other-tenant")), crossing));
      assertEquals(
          new GuestClusterRef("other-tenant", "guest"),
          resolve(TenantMapping.local(true, List.of()), crossing));
    }

    @Test
    void theRefusalNamesBothNamespacesAndHowToAllowIt() {
      GuestAccessException e =
          assertThrows(
              GuestAccessException.class,
              () ->
                  resolve(
                      TenantMapping.local(false, List.of()),
                      Map.of(
                          CapkLabels.CLUSTER_NAME,
                          "guest",
                          CapkLabels.KUBEVIRT_MACHINE_NAMESPACE,
                          "other-tenant")));
      assertTrue(
          e.getMessage().contains("vmi-ns") && e.getMessage().contains("other-tenant/guest"),
          e.getMessage());
      assertTrue(
          e.getMessage().contains("--cross-namespace-cluster=vmi-ns=other-tenant"), e.getMessage());
    }

    @Test
    void malformedMappingsAreRefusedByName() {
      for (String bad : List.of("no-equals", "=x", "x=", "a=b=c")) {
        IllegalArgumentException e =
            assertThrows(
                IllegalArgumentException.class, () -> TenantMapping.local(false, List.of(bad)));
        assertTrue(e.getMessage().contains(bad), e.getMessage());
      }
    }

    @Test
    void noClusterLabelNoCluster() {
      TenantMapping policy = TenantMapping.local(true, List.of());
      assertEquals(GuestAccessException.Reason.MissingClusterLabel, refusal(policy, Map.of()));
      assertEquals(GuestAccessException.Reason.MissingClusterLabel, refusal(policy, null));
      assertEquals(
          GuestAccessException.Reason.MissingClusterLabel,
          refusal(policy, Map.of(CapkLabels.CLUSTER_NAME, " ")));
    }
  }

  @Nested
  class KubeconfigContent {
    static final String GOOD =
        """
        apiVersion: v1
        kind: Config
        clusters:
        - name: c
          cluster:
            server: https://10.0.0.1:6443
            certificate-authority-data: Q0EK
        users:
        - name: u
          user:
            client-certificate-data: Q0VSVAo=
            client-key-data: S0VZCg==
        contexts:
        - name: x
          context: {cluster: c, user: u}
        current-context: x
        """;

    @Test
    void embeddedCredentialsAreAccepted() {
      assertEquals(List.of(), GuestClients.kubeconfigViolations(GOOD, false));
    }

    @Test
    void fileReferencesAndExecPluginsAreRefused() {
      String bad =
          GOOD.replace(
                  "client-key-data: S0VZCg==",
                  "tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token")
              .replace("certificate-authority-data: Q0EK", "certificate-authority: /etc/ca.crt");
      List<String> problems = GuestClients.kubeconfigViolations(bad, false);
      assertEquals(2, problems.size(), problems.toString());
      String exec = GOOD.replace("client-key-data: S0VZCg==", "exec: {command: /bin/sh}");
      assertFalse(GuestClients.kubeconfigViolations(exec, false).isEmpty());
    }

    @Test
    void plainHttpServerIsRefused() {
      assertFalse(
          GuestClients.kubeconfigViolations(GOOD.replace("https://", "http://"), false).isEmpty());
    }

    @Test
    void messagesNeverQuoteTheContent() {
      String secretish = "c2VjcmV0LXRva2VuLXZhbHVl";
      String notYaml = "clusters: [ {" + secretish;
      List<String> problems = GuestClients.kubeconfigViolations(notYaml, false);
      assertFalse(problems.isEmpty());
      assertTrue(problems.stream().noneMatch(p -> p.contains(secretish)), problems.toString());
      List<String> bad =
          GuestClients.kubeconfigViolations(
              GOOD.replace("client-key-data: S0VZCg==", "tokenFile: " + secretish), false);
      assertTrue(bad.stream().noneMatch(p -> p.contains(secretish)), bad.toString());
    }

    @Test
    void notAKubeconfigIsRefused() {
      assertFalse(GuestClients.kubeconfigViolations("just a string", false).isEmpty());
      assertFalse(
          GuestClients.kubeconfigViolations("apiVersion: v1\nclusters: []\n", false).isEmpty());
    }
  }

  @Nested
  class FailureClassification {
    @Test
    void noResponseAndServerOverloadAreTransient() {
      assertTrue(GuestClient.isTransient(new ApiException(new IOException("connection refused"))));
      assertTrue(GuestClient.isTransient(new SocketTimeoutException()));
      for (int code : new int[] {429, 500, 502, 503, 504}) {
        assertTrue(GuestClient.isTransient(new ApiException(code, "x")), "" + code);
      }
    }

    @Test
    void answersThatWouldNotChangeAreNotRetried() {
      for (int code : new int[] {400, 401, 403, 404, 409, 422}) {
        assertFalse(GuestClient.isTransient(new ApiException(code, "x")), "" + code);
      }
      assertFalse(GuestClient.isTransient(new IllegalArgumentException()));
    }

    @Test
    void descriptionsNeverIncludeResponseBodies() {
      ApiException e = new ApiException("m", 500, Map.of(), "{\"token\":\"s3cr3t\"}");
      assertEquals("HTTP 500", dev.capk.vmieviction.kube.RawApi.describeWithoutServerText(e));
      assertEquals(
          "IOException",
          dev.capk.vmieviction.kube.RawApi.describeWithoutServerText(
              new ApiException(new IOException("https://user:pw@host"))));
    }
  }
}
