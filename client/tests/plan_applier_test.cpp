#include <catch2/catch.hpp>

#include <string>

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
