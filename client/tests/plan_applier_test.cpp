#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "client/core/plan_applier.hpp"

using namespace std::chrono_literals;
using toast::client::PieceIndex;
using toast::client::PiecePlan;
using toast::client::PieceSet;
using toast::client::PlanApplier;

namespace {

// Records every call in order, as text.
struct RecordingControl : toast::client::PieceControl {
    std::vector<std::string> calls;
    void prioritize(const std::vector<std::pair<PieceIndex, std::uint8_t>>& changes) override {
        std::string s = "prio";
        for (auto [p, v] : changes) {
            s += ' ';
            s += std::to_string(p.value());
            s += '=';
            s += std::to_string(v);
        }
        calls.push_back(s);
    }
    void set_deadline(PieceIndex piece, std::chrono::milliseconds d) override {
        calls.push_back("deadline " + std::to_string(piece.value()) + "@" + std::to_string(d.count()));
    }
    void reset_deadline(PieceIndex piece) override {
        calls.push_back("reset " + std::to_string(piece.value()));
    }
};

PiecePlan plan_of(std::vector<std::uint8_t> prio, std::vector<std::pair<int, int>> deadlines = {},
                  std::vector<int> give_up = {}) {
    PiecePlan plan;
    plan.priority = std::move(prio);
    for (auto [p, ms] : deadlines)
        plan.deadlines.push_back({PieceIndex(p), std::chrono::milliseconds(ms)});
    for (auto p : give_up)
        plan.give_up.push_back(PieceIndex(p));
    return plan;
}

}  // namespace

TEST_CASE("the applier sends only the priorities that changed", "[client][applier]") {
    PlanApplier applier(toast::client::PieceCount(4));
    RecordingControl c;
    PieceSet had(toast::client::PieceCount(4));
    applier.apply(plan_of({7, 6, 4, 4}), had, 0, c);
    CHECK(c.calls == std::vector<std::string>{"prio 0=7 1=6"});
    c.calls.clear();
    applier.apply(plan_of({7, 6, 4, 4}), had, 100, c);
    CHECK(c.calls.empty());
    applier.apply(plan_of({7, 5, 4, 4}), had, 200, c);
    CHECK(c.calls == std::vector<std::string>{"prio 1=5"});
}

TEST_CASE("a raise from 0 waits until plans agree twice", "[client][applier]") {
    PlanApplier applier(toast::client::PieceCount(3));
    RecordingControl c;
    PieceSet had(toast::client::PieceCount(3));
    applier.apply(plan_of({4, 0, 4}), had, 0, c);
    CHECK(c.calls == std::vector<std::string>{"prio 1=0"});  // a drop is immediate
    c.calls.clear();
    applier.apply(plan_of({4, 4, 4}), had, 100, c);
    CHECK(c.calls.empty());  // one plan is not enough to raise piece 1 again
    applier.apply(plan_of({4, 0, 4}), had, 200, c);
    CHECK(c.calls.empty());  // it changed its mind: nothing was sent, no flapping
    applier.apply(plan_of({4, 5, 4}), had, 300, c);
    applier.apply(plan_of({4, 5, 4}), had, 400, c);
    CHECK(c.calls == std::vector<std::string>{"prio 1=5"});
    CHECK(applier.stats().flips_deferred == 2);
}

TEST_CASE("a given-up piece drops to 0 at once", "[client][applier]") {
    PlanApplier applier(toast::client::PieceCount(3));
    RecordingControl c;
    PieceSet had(toast::client::PieceCount(3));
    applier.apply(plan_of({0, 4, 4}, {}, {0}), had, 0, c);
    CHECK(c.calls == std::vector<std::string>{"prio 0=0"});
}

TEST_CASE("new deadlines are set before old ones are reset, and reset pieces get their priority back",
          "[client][applier]") {
    PlanApplier applier(toast::client::PieceCount(4));
    RecordingControl c;
    PieceSet had(toast::client::PieceCount(4));
    applier.apply(plan_of({7, 7, 4, 4}, {{0, 1000}, {1, 2000}}), had, 0, c);
    CHECK(c.calls == std::vector<std::string>{"deadline 0@1000", "deadline 1@2000"});
    c.calls.clear();
    // Piece 0 is given up; piece 2 gets a deadline. libtorrent resets 0 to priority 1, so 0 is sent again.
    applier.apply(plan_of({0, 7, 7, 4}, {{1, 1900}, {2, 3000}}, {0}), had, 100, c);
    CHECK(c.calls == std::vector<std::string>{"deadline 2@3000", "reset 0", "prio 0=0"});
    CHECK(applier.applied_deadlines().size() == 2);
}

TEST_CASE("a deadline is moved only when it changed by more than the slack", "[client][applier]") {
    PlanApplier applier(toast::client::PieceCount(2));
    RecordingControl c;
    PieceSet had(toast::client::PieceCount(2));
    applier.apply(plan_of({7, 4}, {{0, 5000}}), had, 0, c);
    c.calls.clear();
    applier.apply(plan_of({7, 4}, {{0, 4700}}), had, 250, c);  // same absolute time, give or take
    CHECK(c.calls.empty());
    applier.apply(plan_of({7, 4}, {{0, 1000}}), had, 500, c);  // 3.5 s earlier
    CHECK(c.calls == std::vector<std::string>{"deadline 0@1000"});
}

TEST_CASE("had pieces are left alone", "[client][applier]") {
    PlanApplier applier(toast::client::PieceCount(3));
    RecordingControl c;
    PieceSet had(toast::client::PieceCount(3));
    had.set(PieceIndex(0));
    applier.apply(plan_of({0, 7, 4}, {{0, 100}}), had, 0, c);
    CHECK(c.calls == std::vector<std::string>{"prio 1=7"});
}

namespace {

// The applier's rules written plainly (every piece visited, every tick), to hold the applier to.
struct ReferenceApplier {
    std::vector<std::uint8_t> applied;
    std::vector<int> pending;
    std::map<int, std::int64_t> deadlines;
    int settle = 2;
    std::int64_t slack = 1000;
    void apply(const PiecePlan& plan, const PieceSet& had, std::int64_t now, RecordingControl& c) {
        const int n = static_cast<int>(applied.size());
        std::set<int> wanted;
        for (const auto& d : plan.deadlines) {
            const int p = d.piece.value();
            if (p < 0 || p >= n || had.has(d.piece)) continue;
            wanted.insert(p);
            const auto at = now + d.deadline.count();
            auto it = deadlines.find(p);
            if (it != deadlines.end() && std::llabs(it->second - at) <= slack) continue;
            c.set_deadline(d.piece, d.deadline);
            deadlines[p] = at;
            applied[static_cast<std::size_t>(p)] = 7;
        }
        for (auto it = deadlines.begin(); it != deadlines.end();) {
            if (wanted.count(it->first) || had.has(PieceIndex(it->first))) {
                ++it;
                continue;
            }
            c.reset_deadline(PieceIndex(it->first));
            applied[static_cast<std::size_t>(it->first)] = 1;
            it = deadlines.erase(it);
        }
        std::vector<std::pair<PieceIndex, std::uint8_t>> changes;
        for (int p = 0; p < n && p < static_cast<int>(plan.priority.size()); ++p) {
            auto& cur = applied[static_cast<std::size_t>(p)];
            auto& pend = pending[static_cast<std::size_t>(p)];
            std::uint8_t want = wanted.count(p) ? 7 : plan.priority[static_cast<std::size_t>(p)];
            if (had.has(PieceIndex(p)) || want == cur) {
                pend = 0;
                continue;
            }
            if (cur == 0 && want != 0 && ++pend < settle) continue;
            pend = 0;
            cur = want;
            changes.emplace_back(PieceIndex(p), want);
        }
        if (!changes.empty()) c.prioritize(changes);
    }
};

}  // namespace

TEST_CASE("the applier makes the calls its rules make, plan after plan", "[client][applier]") {
    // Random plans over 150 pieces (a few changes a plan, flips to and from 0, deadlines coming and going,
    // pieces arriving, plans shorter than the title): the same calls in the same order as the rules applied
    // piece by piece.
    std::uint64_t state = 7;
    auto next = [&state](std::uint64_t n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return (state >> 33) % n;
    };
    for (int round = 0; round < 20; ++round) {
        const int n = 150;
        PlanApplier applier{toast::client::PieceCount(n)};
        ReferenceApplier ref{std::vector<std::uint8_t>(n, 4), std::vector<int>(n, 0), {}};
        RecordingControl got, want;
        PieceSet had{toast::client::PieceCount(n)};
        std::vector<std::uint8_t> prio(n, 4);
        for (int tick = 0; tick < 60; ++tick) {
            for (int k = static_cast<int>(next(6)); k-- > 0;)
                prio[next(n)] = static_cast<std::uint8_t>(next(8));
            PiecePlan plan;
            plan.priority = prio;
            if (next(10) == 0) plan.priority.resize(next(n));
            for (int k = static_cast<int>(next(5)); k-- > 0;)
                plan.deadlines.push_back(
                    {PieceIndex(static_cast<int>(next(n + 5))), std::chrono::milliseconds(next(3000))});
            if (next(3) == 0) {
                const auto p = PieceIndex(static_cast<int>(next(n)));
                had.set(p);
                applier.on_piece_had(p);
                ref.deadlines.erase(p.value());
            }
            const std::int64_t now = tick * 1000;
            applier.apply(plan, had, now, got);
            ref.apply(plan, had, now, want);
            REQUIRE(got.calls == want.calls);
        }
        for (int p = 0; p < n; ++p)
            CHECK(applier.applied_priority(PieceIndex(p)) == ref.applied[static_cast<std::size_t>(p)]);
    }
}
