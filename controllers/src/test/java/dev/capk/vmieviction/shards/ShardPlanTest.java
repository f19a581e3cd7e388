package dev.capk.vmieviction.shards;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.capk.vmieviction.shards.ShardPlan.Lease;
import dev.capk.vmieviction.shards.ShardPlan.Plan;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The shard decision as a table (me, live members, shards, their Leases in; what to hold and what
 * to release out), and the balance of the assignment over many shapes.
 */
class ShardPlanTest {

  static final String ME = "me";
  static final String OTHER = "other";
  static final Set<String> BOTH = Set.of(ME, OTHER);

  /** A shard the rendezvous gives to ME against OTHER, and one it gives to OTHER. */
  static final String MINE = shardWonBy(ME);

  static final String THEIRS = shardWonBy(OTHER);

  static String shardWonBy(String member) {
    return IntStream.range(0, 100)
        .mapToObj(i -> "infra-" + i)
        .filter(s -> ShardPlan.first(s, BOTH).equals(member))
        .findFirst()
        .orElseThrow();
  }

  static Lease held(String holder) {
    return new Lease(holder, false);
  }

  static Lease expired(String holder) {
    return new Lease(holder, true);
  }

  static final Lease FREE = new Lease(null, false);
  static final Lease CLEARED = new Lease("", false);

  static Stream<Arguments> decisions() {
    return Stream.of(
        Arguments.of("alone, no Lease yet: take it", Set.of(), MINE, null, Set.of(MINE), Set.of()),
        Arguments.of(
            "alone, another's Lease live: wait for it",
            Set.of(),
            MINE,
            held(OTHER),
            Set.of(),
            Set.of()),
        Arguments.of("mine, free", BOTH, MINE, FREE, Set.of(MINE), Set.of()),
        Arguments.of("mine, holder cleared", BOTH, MINE, CLEARED, Set.of(MINE), Set.of()),
        Arguments.of("mine, held by me: renew", BOTH, MINE, held(ME), Set.of(MINE), Set.of()),
        Arguments.of(
            "mine, my own Lease expired (renewals failed): take it again",
            BOTH,
            MINE,
            expired(ME),
            Set.of(MINE),
            Set.of()),
        Arguments.of(
            "mine, held live by the other: wait for its release",
            BOTH,
            MINE,
            held(OTHER),
            Set.of(),
            Set.of()),
        Arguments.of(
            "mine, the other's Lease expired: take it over",
            BOTH,
            MINE,
            expired(OTHER),
            Set.of(MINE),
            Set.of()),
        Arguments.of(
            "the other's, held by me: release", BOTH, THEIRS, held(ME), Set.of(), Set.of(THEIRS)),
        Arguments.of(
            "the other's, expired in my name: release",
            BOTH,
            THEIRS,
            expired(ME),
            Set.of(),
            Set.of(THEIRS)),
        Arguments.of("the other's, free: leave it", BOTH, THEIRS, FREE, Set.of(), Set.of()),
        Arguments.of(
            "the other's, its holder expired: leave it to the other",
            BOTH,
            THEIRS,
            expired("gone"),
            Set.of(),
            Set.of()),
        Arguments.of(
            "the other left (not live): its shard is mine",
            Set.of(),
            THEIRS,
            expired(OTHER),
            Set.of(THEIRS),
            Set.of()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("decisions")
  void decides(
      String why,
      Set<String> members,
      String shard,
      Lease lease,
      Set<String> hold,
      Set<String> release) {
    Map<String, Lease> leases = new HashMap<>();
    if (lease != null) {
      leases.put(shard, lease);
    }
    assertEquals(
        new Plan(hold, release), ShardPlan.decide(ME, members, Set.of(shard), leases), why);
  }

  @Test
  void aShardThatNoLongerExistsIsReleasedByItsHolderAndTakenByNoOne() {
    Map<String, Lease> leases = Map.of("gone", held(ME), "gone-too", FREE);
    assertEquals(new Plan(Set.of(), Set.of("gone")), ShardPlan.decide(ME, BOTH, Set.of(), leases));
  }

  @Test
  void everyShardHasExactlyOneMemberAndNoMemberMoreThanCeilOfShardsOverMembers() {
    for (int m = 1; m <= 5; m++) {
      Set<String> members = new TreeSet<>();
      for (int i = 0; i < m; i++) {
        members.add("replica-" + i + "_" + Integer.toHexString(31 * i + m));
      }
      for (int n = 0; n <= 13; n++) {
        Set<String> shards = new TreeSet<>();
        IntStream.range(0, n).forEach(i -> shards.add(Integer.toHexString(0xabc00 + i * 7919)));
        int room = (n + m - 1) / m;
        Set<String> taken = new HashSet<>();
        for (String member : members) {
          // Each member alone, from the same reads: no Leases yet.
          Set<String> mine = ShardPlan.decide(member, members, shards, Map.of()).hold();
          assertTrue(mine.size() <= room, m + " members, " + n + " shards: " + mine);
          mine.forEach(s -> assertTrue(taken.add(s), "held twice: " + s));
        }
        assertEquals(shards, taken, m + " members, " + n + " shards: every shard held");
      }
    }
  }

  @Test
  void theAssignmentDoesNotDependOnTheOrderMembersAndShardsAreGivenIn() {
    Set<String> shards = Set.of("a1", "b2", "c3", "d4", "e5", "f6", "g7");
    Set<String> members = Set.of("x", "y", "z");
    Map<String, String> owners = ShardPlan.assign(shards, members);
    assertEquals(
        owners, ShardPlan.assign(new TreeSet<>(shards).descendingSet(), new TreeSet<>(members)));
    assertEquals(shards, owners.keySet());
  }

  @Test
  void theReporterOfAnItemIsOneOfTheMembersAndTheSameWhoeverAsks() {
    Set<String> members = Set.of("x", "y", "z");
    String reporter = ShardPlan.first("ns/kubevirtcluster", members);
    assertTrue(members.contains(reporter));
    assertEquals(reporter, ShardPlan.first("ns/kubevirtcluster", new TreeSet<>(members)));
  }
}
