package dev.capk.vmieviction.shards;

import com.google.common.hash.Hashing;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which shards (infra clusters, by key) a replica should hold, from what every replica reads alike:
 * the live members and the shards' Leases. Pure, so that every replica that reads the same computes
 * the same answer, with no replica talking to another.
 *
 * <p>Each shard goes to the member of highest rendezvous weight (a hash of shard key and member)
 * that still has room, taking the shards in key order; a member has room below ceil(shards /
 * members). So each member holds at most that many, and a member joining or leaving moves only some
 * shards.
 */
public final class ShardPlan {

  private ShardPlan() {}

  /**
   * A shard's Lease as one replica sees it.
   *
   * @param holder its holder identity, null or empty when free
   * @param expired not renewed within its duration, as this replica observed it
   */
  public record Lease(String holder, boolean expired) {
    /** Free, or its holder stopped renewing: anyone the plan names may take it. */
    boolean takeable() {
      return holder == null || holder.isEmpty() || expired;
    }
  }

  /**
   * @param hold the shards to acquire (free or expired) or renew (held by me)
   * @param release the shards I hold that another member should hold, or that no longer exist
   */
  public record Plan(Set<String> hold, Set<String> release) {
    public Plan {
      hold = Set.copyOf(hold);
      release = Set.copyOf(release);
    }
  }

  /**
   * @param me this replica's identity, a member whether or not its membership Lease was read
   * @param members the identities of the live members
   * @param shards the shard keys that exist now
   * @param leases the shards' Leases by key (absent: no Lease yet)
   */
  public static Plan decide(
      String me, Set<String> members, Set<String> shards, Map<String, Lease> leases) {
    Set<String> everyone = new TreeSet<>(members);
    everyone.add(me);
    Map<String, String> owners = assign(shards, everyone);
    Set<String> hold = new TreeSet<>();
    for (Map.Entry<String, String> e : owners.entrySet()) {
      Lease lease = leases.get(e.getKey());
      if (me.equals(e.getValue())
          && (lease == null || lease.takeable() || me.equals(lease.holder()))) {
        hold.add(e.getKey());
      }
    }
    Set<String> release = new TreeSet<>();
    leases.forEach(
        (shard, lease) -> {
          if (me.equals(lease.holder()) && !hold.contains(shard)) {
            release.add(shard);
          }
        });
    return new Plan(hold, release);
  }

  /** Each shard's member: highest weight first, skipping members already at ceil(n / m). */
  public static Map<String, String> assign(Set<String> shards, Set<String> members) {
    Map<String, String> owners = new LinkedHashMap<>();
    if (members.isEmpty()) {
      return owners;
    }
    int room = (shards.size() + members.size() - 1) / members.size();
    Map<String, Integer> load = new HashMap<>();
    for (String shard : new TreeSet<>(shards)) {
      for (String member : ranked(shard, members)) {
        if (load.getOrDefault(member, 0) < room) {
          load.merge(member, 1, Integer::sum);
          owners.put(shard, member);
          break;
        }
      }
    }
    return owners;
  }

  /** The one member of highest weight for {@code item}: who reports what concerns no shard. */
  public static String first(String item, Set<String> members) {
    return ranked(item, members).get(0);
  }

  private static List<String> ranked(String item, Set<String> members) {
    return members.stream()
        .sorted(
            Comparator.comparingLong((String m) -> weight(item, m))
                .reversed()
                .thenComparing(Comparator.naturalOrder()))
        .toList();
  }

  /** The same on every replica and every JVM: a hash of both names, not String.hashCode. */
  static long weight(String item, String member) {
    return Hashing.murmur3_128()
        .hashString(item + "\u0000" + member, StandardCharsets.UTF_8)
        .asLong();
  }
}
