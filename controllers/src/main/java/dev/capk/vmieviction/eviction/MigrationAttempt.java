package dev.capk.vmieviction.eviction;

import dev.capk.vmieviction.api.EvictionAnnotations;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * The live migration attempt recorded on a VMI ({@link EvictionAnnotations#MIGRATION_ATTEMPT}):
 * {@code <drain start>/<n>/<attempt created>}. An attempt recorded for another drain start (an
 * earlier evacuation) is no attempt of this one.
 *
 * @param number 1 for the first attempt
 * @param began when this attempt was recorded, for the migration duration
 */
record MigrationAttempt(int number, Instant began) {

  static String format(String drainStart, int number, Instant began) {
    return drainStart + "/" + number + "/" + DrainStartTime.format(began);
  }

  /** The attempt of the evacuation that started at {@code drainStart}, if one is recorded. */
  static Optional<MigrationAttempt> parse(String raw, String drainStart) {
    if (raw == null || drainStart == null || !raw.startsWith(drainStart + "/")) {
      return Optional.empty();
    }
    String[] rest = raw.substring(drainStart.length() + 1).split("/", 2);
    if (rest.length != 2) {
      return Optional.empty();
    }
    try {
      int n = Integer.parseInt(rest[0]);
      return n < 1
          ? Optional.empty()
          : Optional.of(new MigrationAttempt(n, Instant.parse(rest[1])));
    } catch (NumberFormatException | DateTimeParseException e) {
      return Optional.empty();
    }
  }

  /** The drain start an attempt annotation belongs to, whatever evacuation that was. */
  static Optional<String> drainStartOf(String raw) {
    if (raw == null) {
      return Optional.empty();
    }
    String[] parts = raw.split("/");
    return parts.length == 3 ? Optional.of(parts[0]) : Optional.empty();
  }
}
