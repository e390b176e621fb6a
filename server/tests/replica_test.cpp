#include <catch2/catch.hpp>

#include <vector>

#include "server/core/replica_chooser.hpp"

using namespace toast::server;

namespace {

constexpr double kAccess = 0.016;          // 16 ms, the thesis's SATA-300 t_a
constexpr double kPerByte = 8.0 / 446e6;   // r_d = 446 Mbps
constexpr std::uint64_t kBlock = 4 << 20;  // 4 MiB

DiskLoad disk(std::uint64_t ops, double per_byte = kPerByte, bool online = true) {
    return DiskLoad{.online = online,
                    .outstanding_bytes = ops * kBlock,
                    .outstanding_ops = ops,
                    .seconds_per_byte = per_byte,
                    .access_seconds = kAccess};
}

}  // namespace

TEST_CASE("the replica on the disk with less queued work is chosen", "[server][replica]") {
    std::vector<DiskLoad> disks{disk(3), disk(1), disk(2)};
    std::vector<std::uint32_t> candidates{0, 1};
    CHECK(choose_replica(candidates, disks, kBlock, 0) == 1u);
    std::vector<std::uint32_t> other{2, 0};
    CHECK(choose_replica(other, disks, kBlock, 0) == 0u);  // disk 2 (position 0) beats disk 0
}

TEST_CASE("a fail-stutter disk is avoided even when its queue is shorter", "[server][replica]") {
    // Disk 0 reads 150% extra useless data with every request (§4.3), so its observed cost per byte is 2.5x.
    // It has nothing queued; disk 1 has one 4 MiB read ahead of ours. A 4 MiB read at full speed takes 75 ms:
    // disk 0 finishes in 2.5 x 75 + 16 = 204 ms, disk 1 in 2 x 75 + 2 x 16 = 182 ms.
    std::vector<DiskLoad> disks{disk(0, kPerByte * 2.5), disk(1)};
    std::vector<std::uint32_t> candidates{0, 1};
    CHECK(disks[0].outstanding_ops < disks[1].outstanding_ops);
    CHECK(choose_replica(candidates, disks, kBlock, 0) == 1u);
    CHECK(expected_finish_seconds(disks[1], kBlock) < expected_finish_seconds(disks[0], kBlock));
    // The same disk without the stutter would have been chosen.
    disks[0].seconds_per_byte = kPerByte;
    CHECK(choose_replica(candidates, disks, kBlock, 1) == 0u);
}

TEST_CASE("offline disks are never chosen", "[server][replica]") {
    std::vector<DiskLoad> disks{disk(0, kPerByte, false), disk(5), disk(0, kPerByte, false)};
    std::vector<std::uint32_t> candidates{0, 1};
    CHECK(choose_replica(candidates, disks, kBlock, 0) == 1u);
    std::vector<std::uint32_t> dead{0, 2};
    CHECK_FALSE(choose_replica(dead, disks, kBlock, 0));
    std::vector<std::uint32_t> unknown{7};
    CHECK_FALSE(choose_replica(unknown, disks, kBlock, 0));
    CHECK_FALSE(choose_replica({}, disks, kBlock, 0));
}

TEST_CASE("ties between idle disks alternate with the tie-break", "[server][replica]") {
    std::vector<DiskLoad> disks{disk(0), disk(0)};
    std::vector<std::uint32_t> candidates{0, 1};
    CHECK(choose_replica(candidates, disks, kBlock, 0) == 0u);
    CHECK(choose_replica(candidates, disks, kBlock, 1) == 1u);
    CHECK(choose_replica(candidates, disks, kBlock, 2) == 0u);
    CHECK(choose_replica(candidates, disks, kBlock, 7) == 1u);
}

TEST_CASE("a copy that failed its checksum is chosen only when no other copy is online",
          "[server][replica]") {
    std::vector<DiskLoad> disks{disk(0), disk(6), disk(0, kPerByte, false)};
    std::vector<std::uint32_t> candidates{0, 1};
    CHECK(choose_replica(candidates, disks, kBlock, 0) == 0u);        // idle disk 0 wins on load
    CHECK(choose_replica(candidates, disks, kBlock, 0, 0b01) == 1u);  // but its copy is suspect
    CHECK(choose_replica(candidates, disks, kBlock, 0, 0b10) == 0u);
    // Every copy suspect: load decides again.
    CHECK(choose_replica(candidates, disks, kBlock, 0, 0b11) == 0u);
    // The trusted copy's disk is offline: the suspect one is still read, it is the last chance.
    std::vector<std::uint32_t> with_offline{0, 2};
    CHECK(choose_replica(with_offline, disks, kBlock, 1, 0b01) == 0u);
    std::vector<std::uint32_t> all_offline{2};
    CHECK_FALSE(choose_replica(all_offline, disks, kBlock, 0, 0b01));
}

TEST_CASE("the service model learns access time and transfer rate from mixed reads", "[server][replica]") {
    ServiceModel m(1e-4, 1e-9);  // the prior: a fast disk
    const double access = 0.012, per_byte = 1.0 / 50e6;
    for (int i = 0; i < 200; ++i) {
        std::uint64_t bytes = (i % 3 == 0) ? 64 * 1024 : (i % 3 == 1 ? 1 << 20 : 4 << 20);
        m.observe(bytes, access + static_cast<double>(bytes) * per_byte);
    }
    CHECK(m.access_seconds() == Approx(access).epsilon(0.02));
    CHECK(m.seconds_per_byte() == Approx(per_byte).epsilon(0.02));
}

TEST_CASE("same-size reads from a stuttering disk raise its cost per byte", "[server][replica]") {
    ServiceModel healthy(kAccess, kPerByte), stutter(kAccess, kPerByte);
    for (int i = 0; i < 50; ++i) {
        healthy.observe(kBlock, kAccess + kBlock * kPerByte);
        stutter.observe(kBlock, kAccess + 1.5 * kBlock * kPerByte);  // 50% extra useless bytes
    }
    CHECK(healthy.seconds_per_byte() == Approx(kPerByte).epsilon(0.02));
    CHECK(healthy.access_seconds() == Approx(kAccess).epsilon(0.05));
    CHECK(stutter.seconds_per_byte() > 1.4 * kPerByte);
    std::vector<DiskLoad> disks{{.online = true,
                                 .outstanding_bytes = 0,
                                 .outstanding_ops = 0,
                                 .seconds_per_byte = stutter.seconds_per_byte(),
                                 .access_seconds = stutter.access_seconds()},
                                {.online = true,
                                 .outstanding_bytes = 0,
                                 .outstanding_ops = 0,
                                 .seconds_per_byte = healthy.seconds_per_byte(),
                                 .access_seconds = healthy.access_seconds()}};
    std::vector<std::uint32_t> candidates{0, 1};
    CHECK(choose_replica(candidates, disks, kBlock, 0) == 1u);
}

TEST_CASE("the service model ignores nonsense observations", "[server][replica]") {
    ServiceModel m(kAccess, kPerByte);
    for (int i = 0; i < 20; ++i)
        m.observe(1 << 20, -1.0);
    CHECK(m.seconds_per_byte() >= 0);
    CHECK(m.access_seconds() >= 0);
}

TEST_CASE("an unobserved service model fades back to its prior with the half-life", "[server][replica]") {
    auto mb_seconds = [](const ServiceModel& m) { return m.access_seconds() + 1e6 * m.seconds_per_byte(); };
    const double prior = kAccess + 1e6 * kPerByte;
    ServiceModel m(kAccess, kPerByte);
    for (int i = 0; i < 50; ++i)
        m.observe(kBlock, kAccess + 3.0 * kBlock * kPerByte);  // 200% stutter
    const double learned = mb_seconds(m);
    REQUIRE(learned > 1.8 * prior);

    m.age(0, 10);  // no time passed
    CHECK(mb_seconds(m) == Approx(learned));
    m.age(-1, 10);  // nonsense
    CHECK(mb_seconds(m) == Approx(learned));

    std::vector<double> seen{learned};
    for (int half_lives = 1; half_lives <= 3; ++half_lives) {
        m.age(10, 10);
        seen.push_back(mb_seconds(m));
    }
    // Each half-life halves the distance to the prior.
    for (std::size_t i = 1; i < seen.size(); ++i)
        CHECK(seen[i] - prior == Approx((seen[i - 1] - prior) / 2).epsilon(0.05));
    m.age(200, 10);
    CHECK(mb_seconds(m) == Approx(prior).epsilon(1e-4));
    CHECK(m.access_seconds() == Approx(kAccess).epsilon(1e-3));

    // One more read from the still-stuttering disk counts as a tenth of the evidence, as before the fade.
    m.observe(kBlock, kAccess + 3.0 * kBlock * kPerByte);
    CHECK(mb_seconds(m) - prior == Approx(0.1 * (learned - prior)).epsilon(0.05));
}

TEST_CASE("a prior-only model does not move when aged", "[server][replica]") {
    ServiceModel m(kAccess, kPerByte);
    m.age(1e6, 1);
    CHECK(m.access_seconds() == Approx(kAccess));
    CHECK(m.seconds_per_byte() == Approx(kPerByte));
}
