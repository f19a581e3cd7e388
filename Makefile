# The project's commands. `make test` is what CI runs (.ci/run).
SHELL := bash
MVN ?= mvn -B
# Where the Kubernetes binaries are built and cached (outside the repo); see hack/build-k8s.sh.
export K8S_BIN_CACHE ?= $(HOME)/.cache/capk-vmi-eviction/k8s-bin
# The JDK (25 or later) that Maven, the tests, the demo and the benchmarks run on, first on PATH;
# hack/java-home.sh says where it looks. Without one, every target stops here with its message.
JAVA_HOME := $(shell bash hack/java-home.sh)
ifeq ($(JAVA_HOME),)
$(error no JDK 25 or later: see README.md, Prerequisites)
endif
export JAVA_HOME
export PATH := $(JAVA_HOME)/bin:$(PATH)
# The demo's and the benchmarks' blocking tasks (kubectl, process output) run on CompletableFuture's
# common pool, which JDK 25 no longer widens past its parallelism (one on two cores).
COMMON_POOL := -Djava.util.concurrent.ForkJoinPool.common.parallelism=8
# Maven 3.8's own Guava would warn on every run that JDK 25 will remove sun.misc.Unsafe's memory access.
export MAVEN_OPTS ?= --sun-misc-unsafe-memory-access=allow

.PHONY: test unit fmt binaries promtool package demo soak e2e bench aot-recording capk-overrides clean

## binaries: build (or reuse) etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok
binaries:
	bash hack/build-k8s.sh

## promtool: build (or reuse) Prometheus' promtool, which checks and tests config/prometheus's alert rules
promtool:
	bash hack/build-promtool.sh

## test: unit, integration and end-to-end tests against real local control planes
test: promtool binaries
	rm -rf e2e/target/clusters
	PROMTOOL="$$(bash hack/build-promtool.sh 2>/dev/null | tail -n 1)" \
	  K8S_BIN_DIR="$$(bash hack/build-k8s.sh 2>/dev/null | tail -n 1)" $(MVN) verify; rc=$$?; \
	  bash hack/check-no-leftovers.sh || rc=1; bash hack/check-no-secret-leaks.sh || rc=1; exit $$rc

## soak: 20 seeded crash trials (the controller SIGKILLed at random moments of an evacuation)
soak: binaries
	K8S_BIN_DIR="$$(bash hack/build-k8s.sh 2>/dev/null | tail -n 1)" $(MVN) verify -pl e2e -am -Dtest=none \
	  -Dsurefire.failIfNoSpecifiedTests=false -Dit.test=CrashTrialsE2EIT -Dcapk.crashTrials=$${TRIALS:-20}

## e2e: the three end-to-end scenarios alone, on BACKEND=local (default), k3s (needs Docker) or kubeconfig
##      (INFRA_KUBECONFIG, GUEST_A_KUBECONFIG, GUEST_B_KUBECONFIG; WEBHOOK_HOST: how those API servers reach this machine)
BACKEND ?= local
e2e: binaries
	K8S_BIN_DIR="$$(bash hack/build-k8s.sh 2>/dev/null | tail -n 1)" $(MVN) verify -pl e2e -am -Dtest=none \
	  -Dsurefire.failIfNoSpecifiedTests=false -Dit.test='InfraDrainE2EIT,BlockingBudgetE2EIT,ControllerCrashE2EIT' \
	  -Dcapk.e2e.backend=$(BACKEND) -Dcapk.e2e.webhookHost=$(or $(WEBHOOK_HOST),127.0.0.1) \
	  -Dcapk.e2e.kubeconfig.e2e-infra=$(if $(INFRA_KUBECONFIG),$(abspath $(INFRA_KUBECONFIG))) \
	  -Dcapk.e2e.kubeconfig.e2e-guest-a=$(if $(GUEST_A_KUBECONFIG),$(abspath $(GUEST_A_KUBECONFIG))) \
	  -Dcapk.e2e.kubeconfig.e2e-guest-b=$(if $(GUEST_B_KUBECONFIG),$(abspath $(GUEST_B_KUBECONFIG)))

## fmt: format all Java sources (google-java-format, through Spotless); make test fails on unformatted code
fmt:
	$(MVN) -q spotless:apply

## unit: the fast tier alone (no control plane)
unit:
	$(MVN) test -pl api,controllers,training -am

## demo: an infra node drain that drains tenant nodes first, on local clusters, narrated
demo: binaries
	$(MVN) -q -pl e2e -am package dependency:build-classpath -DskipTests -Dmdep.outputFile=target/classpath.txt
	K8S_BIN_DIR="$$(bash hack/build-k8s.sh 2>/dev/null | tail -n 1)" java -Xmx1g $(COMMON_POOL) \
	  -Dcapk.repoRoot="$(CURDIR)" -Dcapk.workDir="$(CURDIR)/e2e/target/demo" \
	  -Dlogback.configurationFile="$(CURDIR)/e2e/src/main/resources/demo-logback.xml" \
	  -cp "e2e/target/classes:$$(cat e2e/target/classpath.txt)" dev.capk.vmieviction.e2e.demo.DemoMain

## bench: speed, scale and cost against peers measured in the same run (never part of test); report: target/bench/report.md
##        BENCH_OPTS picks sections and another controller build, e.g. the head-of-line section against an older jar:
##        make bench BENCH_OPTS="-Dbench.only=headofline -Dcapk.bench.controllerJar=/path/to/vmi-eviction-controller.jar"
##        (sections: drain, startup, evacuation, scale, selector, headofline, migration, cost, external, tenants; the report names the jar and its commit)
##        on request only, never in a default run: shards (3 replicas share 6 infra clusters, one SIGKILLed mid-drain):
##        make bench BENCH_OPTS="-Dbench.only=shards"
##        -Dcapk.bench.extraJvmFlags="..." adds JVM flags after the Deployment's (a profiler agent, another setting);
##        -Dcapk.bench.controllerJavaHome=/path/to/jdk runs the controller on another JDK
##        cost beside CAPK's original Go controller (a binary built outside this repository):
##        make bench BENCH_OPTS="-Dbench.only=cost -Dcapk.bench.goController=/path/to/manager"
bench: binaries
	$(MVN) -q -pl e2e -am package dependency:build-classpath -DskipTests -Dmdep.outputFile=target/classpath.txt
	K8S_BIN_DIR="$$(bash hack/build-k8s.sh 2>/dev/null | tail -n 1)" java -Xmx2g $(COMMON_POOL) $(BENCH_OPTS) \
	  -Dcapk.repoRoot="$(CURDIR)" -Dcapk.workDir="$(CURDIR)/e2e/target/bench" \
	  -Dlogback.configurationFile="$(CURDIR)/e2e/src/main/resources/demo-logback.xml" \
	  -cp "e2e/target/classes:$$(cat e2e/target/classpath.txt)" dev.capk.vmieviction.e2e.bench.BenchMain

## aot-recording: record training/src/main/resources/evacuation.jsonl, the evacuation the controller's ahead-of-time
##                cache is trained on (a controller through a recording proxy, real clusters, 2 VMIs under a budget);
##                again when the controller's requests change (TrainingRunIT says so)
aot-recording: binaries
	$(MAKE) bench BENCH_OPTS="-Dbench.only=aot-recording"

## package: the controller's runnable jar (controllers/target/vmi-eviction-controller.jar) and, next to it,
##          the kubectl plugin launchers kubectl-fastdrain (`kubectl fastdrain drain|cordon|uncordon ...`)
##          and kubectl-vmi_eviction (`kubectl vmi-eviction status ...`)
package:
	$(MVN) -q package -DskipTests -pl controllers -am
	install -m 0755 hack/plugin/kubectl-fastdrain controllers/target/kubectl-fastdrain
	install -m 0755 hack/plugin/kubectl-vmi_eviction controllers/target/kubectl-vmi_eviction

## capk-overrides: clusterctl's overrides layer for CAPK with the controller beside its manager, for
##   CAPK_VERSION (e.g. v0.11.2), from CAPK_COMPONENTS (CAPK's released infrastructure-components.yaml)
##   or, without it, from CAPK's own config/ at that version (hack/capk-release.sh, needs Go);
##   NODE_MAINTENANCE=1 adds the NodeMaintenance component; KUBECTL renders it (default kubectl)
capk-overrides:
	bash hack/capk-overrides.sh "$(or $(CAPK_COMPONENTS),$$(bash hack/capk-release.sh $(CAPK_VERSION) | tail -n 1))" "$(CAPK_VERSION)" $(if $(NODE_MAINTENANCE),--node-maintenance)

clean:
	$(MVN) -q clean
