package dev.capk.vmieviction.e2e.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The Markdown report: a header naming the machine, a summary of every target (met or MISSED, said
 * plainly), then one section per benchmark. Sections append as they finish; the file is rewritten
 * after each, so a run that fails half-way still leaves what it measured.
 */
public final class Report {
  /** One row of the summary: what was measured against which target. */
  public record Verdict(
      String benchmark, String measured, String target, Boolean met, boolean reportOnly) {
    String cell() {
      if (reportOnly) {
        return "–";
      }
      return met == null ? "not measured" : met ? "met" : "**MISSED**";
    }
  }

  private final Path file;
  private final String header;
  private final List<Verdict> verdicts = new ArrayList<>();
  private final List<String> sections = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();
  private String footer = "";

  public Report(Path file, String header) {
    this.file = file;
    this.header = header;
  }

  public synchronized void verdict(String benchmark, String measured, String target, Boolean met) {
    verdicts.add(new Verdict(benchmark, measured, target, met, false));
    write();
  }

  /** A row of the summary for a number reported without a target. */
  public synchronized void measured(String benchmark, String measured) {
    verdicts.add(new Verdict(benchmark, measured, "– (report only)", null, true));
    write();
  }

  public synchronized void section(String markdown) {
    sections.add(markdown.strip() + "\n");
    write();
  }

  public synchronized void note(String line) {
    notes.add(line);
    write();
  }

  public synchronized void footer(String markdown) {
    footer = markdown;
    write();
  }

  public synchronized String render() {
    StringBuilder s = new StringBuilder(header.strip()).append("\n\n");
    s.append("## Targets\n\n");
    s.append("| benchmark | measured | target | verdict |\n| --- | --- | --- | --- |\n");
    for (Verdict v : verdicts) {
      s.append("| ")
          .append(v.benchmark())
          .append(" | ")
          .append(v.measured())
          .append(" | ")
          .append(v.target())
          .append(" | ")
          .append(v.cell())
          .append(" |\n");
    }
    s.append('\n');
    if (!notes.isEmpty()) {
      for (String n : notes) {
        s.append("- ").append(n).append('\n');
      }
      s.append('\n');
    }
    for (String section : sections) {
      s.append(section).append('\n');
    }
    if (!footer.isBlank()) {
      s.append(footer.strip()).append('\n');
    }
    return s.toString();
  }

  private void write() {
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, render());
    } catch (IOException e) {
      System.out.println("bench: cannot write " + file + ": " + e.getMessage());
    }
  }

  /** A Markdown table from a header row and data rows. */
  public static String table(List<String> head, List<List<String>> rows) {
    StringBuilder s = new StringBuilder("| ").append(String.join(" | ", head)).append(" |\n|");
    head.forEach(h -> s.append(" --- |"));
    s.append('\n');
    for (List<String> r : rows) {
      s.append("| ").append(String.join(" | ", r)).append(" |\n");
    }
    return s.toString();
  }

  /** A table row: each cell as a string, the cells of a list cell in its place. */
  public static List<String> row(Object... cells) {
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

  /** A table from its header cells (joined by "|") and rows. */
  public static String table(String head, List<List<String>> rows) {
    return table(List.of(head.split("\\|")), rows);
  }

  public static String f(String format, Object... args) {
    return String.format(Locale.ROOT, format, args);
  }
}
