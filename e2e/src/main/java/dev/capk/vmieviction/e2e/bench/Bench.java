package dev.capk.vmieviction.e2e.bench;

import java.nio.file.Path;

/** One section of the report: what it measures, with its options, in its work directory. */
abstract class Bench {
  Report report;
  BenchOptions opts;

  /** Where its processes' logs and files go. */
  Path work;

  /** Sets the section up to write to {@code report}, working in {@code work/dir}. */
  final Bench in(Report report, BenchOptions opts, Path work, String dir) {
    this.report = report;
    this.opts = opts;
    this.work = work.resolve(dir);
    return this;
  }

  /** Where its API servers write their audit logs. */
  Path auditDir() {
    return work.resolve("audit");
  }

  abstract void run() throws Exception;
}
