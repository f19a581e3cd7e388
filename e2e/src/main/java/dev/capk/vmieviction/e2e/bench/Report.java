package dev.capk.vmieviction.e2e.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The Markdown report: a header naming the machine, a summary of every target (met or MISSED, said
 * plainly), then one section per benchmark. The file is rewritten after each addition, so a run
 * that fails half-way still leaves what it measured.
 */
final class Report {
  private final Path file;
  private final String header;
  private final List<List<String>> verdicts = new ArrayList<>();
  private final List<String> sections = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private String footer = "";

  Report(Path file, String header) {
    this.file = file;
    this.header = header;
  }

  /** A row of the summary; {@code met} null: not measured. */
  synchronized void verdict(String benchmark, String measured, String target, Boolean met) {
    String cell = met == null ? "not measured" : met ? "met" : "**MISSED**";
    verdicts.add(List.of(benchmark, measured, target, cell));
    write();
  }

  /** A row of the summary: {@code value} against {@code target}, at most {@code limit}. */
  void atMost(String benchmark, String format, double value, String target, double limit) {
    verdict(benchmark, f(format, value), target, Double.isNaN(value) ? null : value <= limit);
  }

  /** A row of the summary for a number reported without a target. */
  synchronized void measured(String benchmark, String measured) {
    verdicts.add(List.of(benchmark, measured, "– (report only)", "–"));
    write();
  }

  synchronized void section(String markdown) {
    sections.add(markdown.strip() + "\n");
    write();
  }

  synchronized void note(String line) {
    notes.add("- " + line + "\n");
    write();
  }

  synchronized void footer(String markdown) {
    footer = markdown.strip() + "\n";
    write();
  }

  synchronized String render() {
    StringBuilder s = new StringBuilder(header.strip()).append("\n\n## Targets\n\n");
    s.append(table("benchmark|measured|target|verdict", verdicts)).append('\n');
    if (!notes.isEmpty()) {
      s.append(String.join("", notes)).append('\n');
    }
    sections.forEach(x -> s.append(x).append('\n'));
    return s.append(footer).toString();
  }

  private void write() {
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, render());
    } catch (IOException e) {
      System.out.println("bench: cannot write " + file + ": " + e.getMessage());
    }
  }

  /** A table from its header cells (joined by "|") and rows. */
  static String table(String head, List<List<String>> rows) {
    StringBuilder s = new StringBuilder("| ").append(head.replace("|", " | ")).append(" |\n|");
    s.append(" --- |".repeat(head.split("\\|").length)).append('\n');
    rows.forEach(r -> s.append("| ").append(String.join(" | ", r)).append(" |\n"));
    return s.toString();
  }

  /** A table row: each cell as a string, the cells of a list cell in its place. */
  static List<String> row(Object... cells) {
    List<String> out = new ArrayList<>();
    for (Object c : cells) {
      if (c instanceof List<?> l) {
        l.forEach(x -> out.add(String.valueOf(x)));
      } else {
        out.add(String.valueOf(c));
      }
    }
    return out;
  }

  static String f(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }
}
