#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "client/core/piece_policy.hpp"

using namespace toast::client;
using namespace std::chrono_literals;

namespace {

std::vector<PieceIndex> idx(std::initializer_list<int> list) {
    std::vector<PieceIndex> out;
    for (int p : list)
        out.emplace_back(p);
    return out;
}

std::vector<PieceIndex> first(const std::vector<PieceIndex>& v, std::size_t n) {
    return {v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(n, v.size()))};
}

// Kolmogorov-Smirnov statistic of `samples` (sorted in place) against the CDF 1 - (1 - x)^2.
double ks_against_beta_1_2(std::vector<double>& samples) {
    std::sort(samples.begin(), samples.end());
    double d = 0;
    auto n = static_cast<double>(samples.size());
    for (std::size_t i = 0; i < samples.size(); ++i) {
        double f = 1.0 - (1.0 - samples[i]) * (1.0 - samples[i]);
        d = std::max({d, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
    }
    return d;
}

}  // namespace

TEST_CASE("picker names parse and print", "[client][policy]") {
    for (auto k : {PickerKind::rarest, PickerKind::inorder, PickerKind::beta, PickerKind::hybrid,
                   PickerKind::adaptive})
        CHECK(parse_picker_kind(to_string(k)) == k);
    CHECK(to_string(PickerKind::adaptive) == "adaptive");
    CHECK_FALSE(parse_picker_kind("random"));
    CHECK_FALSE(parse_picker_kind("Hybrid"));
}

TEST_CASE("in-order takes the lowest eligible piece", "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(20));
    s.playhead = PieceIndex(3);
    s.horizon = PieceCount(2);  // 3 and 4 are given up
    s.had.set(PieceIndex(5));
    s.server_fetching.set(PieceIndex(6));
    s.availability[7] = 0;  // no peer has 7
    auto plan = make_policy(PickerKind::inorder, {})->plan(s);
    REQUIRE(plan.wanted.size() == 13);  // 7..19 minus nothing else
    CHECK(plan.wanted.front() == PieceIndex(8));
    CHECK(first(plan.wanted, 4) == idx({8, 9, 10, 11}));
    CHECK(plan.wanted.back() == PieceIndex(7));  // wanted, but after every piece some peer has
    CHECK(plan.give_up == idx({3, 4}));
    CHECK(plan.priority[3] == 0);
    CHECK(plan.priority[5] == 0);
    CHECK(plan.priority[6] == 0);
    CHECK(plan.priority[8] == 7);
    CHECK(plan.priority[0] == 0);  // behind the playhead: not wanted
}

TEST_CASE("every policy excludes pieces before the horizon", "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(50));
    s.playhead = PieceIndex(10);
    s.horizon = PieceCount(5);
    s.inorder_window = PieceCount(12);
    s.had.set(PieceIndex(12));
    for (auto k : {PickerKind::rarest, PickerKind::inorder, PickerKind::beta, PickerKind::hybrid,
                   PickerKind::adaptive}) {
        INFO(to_string(k));
        auto plan = make_policy(k, {})->plan(s);
        CHECK(plan.wanted.size() == 35);
        for (auto p : plan.wanted)
            CHECK(p >= PieceIndex(15));
        CHECK(plan.give_up == idx({10, 11, 13, 14}));
        for (int i = 0; i < 15; ++i)
            CHECK(plan.priority[static_cast<std::size_t>(i)] == 0);
        std::set<PieceIndex> distinct(plan.wanted.begin(), plan.wanted.end());
        CHECK(distinct.size() == plan.wanted.size());
    }
}

TEST_CASE("the same seed gives the same plan, another seed another", "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(200));
    s.playhead = PieceIndex(5);
    s.horizon = PieceCount(3);
    s.inorder_window = PieceCount(20);
    for (auto k : {PickerKind::rarest, PickerKind::beta, PickerKind::hybrid}) {
        INFO(to_string(k));
        PolicyConfig a{.seed = 42}, b{.seed = 43};
        auto p1 = make_policy(k, a)->plan(s);
        auto p2 = make_policy(k, a)->plan(s);
        auto p3 = make_policy(k, b)->plan(s);
        CHECK(p1 == p2);
        CHECK(p1.wanted != p3.wanted);
        // Planning again from the same snapshot does not reshuffle.
        auto policy = make_policy(k, a);
        CHECK(policy->plan(s) == policy->plan(s));
    }
}

TEST_CASE("rarest orders by availability and breaks ties by seed", "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(8));
    s.availability = {5, 2, 7, 1, 2, 0, 3, 2};
    auto plan = make_policy(PickerKind::rarest, {.seed = 9})->plan(s);
    REQUIRE(plan.wanted.size() == 8);
    CHECK(plan.wanted[0] == PieceIndex(3));
    std::set<PieceIndex> twos(plan.wanted.begin() + 1, plan.wanted.begin() + 4);
    CHECK(twos == std::set<PieceIndex>{PieceIndex(1), PieceIndex(4), PieceIndex(7)});
    CHECK(first(std::vector<PieceIndex>(plan.wanted.begin() + 4, plan.wanted.end()), 4) == idx({6, 0, 2, 5}));
    // libtorrent does rarest-first itself: every wanted piece gets the same priority.
    for (auto p : plan.wanted)
        CHECK(plan.priority[static_cast<std::size_t>(p.value())] == 4);
    CHECK(plan.deadlines.empty());
}

TEST_CASE("hybrid picks in order inside the window and beta beyond it", "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(400));
    s.playhead = PieceIndex(10);
    s.horizon = PieceCount(2);
    s.inorder_window = PieceCount(30);  // in order: 12..39
    s.had.set(PieceIndex(20));
    auto plan = make_policy(PickerKind::hybrid, {.seed = 7})->plan(s);
    std::vector<PieceIndex> expected;
    for (int i = 12; i < 40; ++i)
        if (i != 20) expected.emplace_back(i);
    REQUIRE(plan.wanted.size() == 400 - 12 - 1);
    CHECK(first(plan.wanted, expected.size()) == expected);
    std::vector<PieceIndex> beyond(plan.wanted.begin() + static_cast<std::ptrdiff_t>(expected.size()),
                                   plan.wanted.end());
    for (auto p : beyond)
        CHECK(p >= PieceIndex(40));
    // Beyond the window the order is not playback order ...
    CHECK_FALSE(std::is_sorted(beyond.begin(), beyond.end()));
    // ... but biased to early pieces: the first quarter of the beta order sits mostly in the first half.
    auto early =
        std::count_if(beyond.begin(), beyond.begin() + 90, [](PieceIndex p) { return p < PieceIndex(220); });
    CHECK(early > 55);
}

TEST_CASE("the adaptive policy orders as hybrid does with the window it is given",
          "[client][policy][adaptive]") {
    auto s = SwarmSnapshot::empty(PieceCount(100));
    s.playhead = PieceIndex(10);
    s.horizon = PieceCount(2);
    for (int window : {15, 0}) {
        INFO("window " << window);
        s.inorder_window = PieceCount(window);
        auto hybrid = make_policy(PickerKind::hybrid, {.seed = 9})->plan(s);
        auto adaptive = make_policy(PickerKind::adaptive, {.seed = 9})->plan(s);
        CHECK(adaptive == hybrid);
        CHECK(adaptive.give_up == idx({10, 11}));
    }
    // No window: beta(1,2) from the give-up zone on, no deadlines.
    auto beta = make_policy(PickerKind::beta, {.seed = 9})->plan(s);
    auto adaptive = make_policy(PickerKind::adaptive, {.seed = 9})->plan(s);
    CHECK(adaptive.wanted == beta.wanted);
    CHECK(adaptive.deadlines.empty());
}

TEST_CASE("hybrid falls back to beta when the horizon covers the window", "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(100));
    s.horizon = PieceCount(10);
    s.inorder_window = PieceCount(5);
    auto hybrid = make_policy(PickerKind::hybrid, {.seed = 3})->plan(s);
    auto beta = make_policy(PickerKind::beta, {.seed = 3})->plan(s);
    CHECK(hybrid.wanted == beta.wanted);
    CHECK(hybrid.deadlines.empty());
}

TEST_CASE("beta samples match the CDF 1-(1-x)^2 within the Kolmogorov-Smirnov bound",
          "[client][policy][beta]") {
    std::mt19937_64 engine(2024);
    const std::size_t n = 20000;
    std::vector<double> samples;
    for (std::size_t i = 0; i < n; ++i) {
        double x = sample_beta_1_2(engine);
        REQUIRE(x >= 0.0);
        REQUIRE(x < 1.0);
        samples.push_back(x);
    }
    auto d = ks_against_beta_1_2(samples);
    CHECK(d < 1.36 / std::sqrt(static_cast<double>(n)));
    // A uniform sample fails the same test: the bound has teeth.
    std::vector<double> uniform;
    for (std::size_t i = 0; i < n; ++i)
        uniform.push_back(uniform_01(engine));
    CHECK(ks_against_beta_1_2(uniform) > 1.36 / std::sqrt(static_cast<double>(n)));
}

TEST_CASE("the beta policy's first pick follows Beta(1,2) over the remaining range",
          "[client][policy][beta]") {
    // 2000 pieces, playhead 100, horizon 100: the range is [200, 2000). Over 3000 seeds the first wanted
    // piece, scaled to [0, 1), must follow the CDF within the KS bound plus one cell's discretisation.
    auto s = SwarmSnapshot::empty(PieceCount(2000));
    s.playhead = PieceIndex(100);
    s.horizon = PieceCount(100);
    const std::size_t runs = 3000;
    std::vector<double> xs;
    for (std::uint64_t seed = 1; seed <= runs; ++seed) {
        auto plan = make_policy(PickerKind::beta, {.seed = seed})->plan(s);
        xs.push_back((plan.wanted.front().value() - 200 + 0.5) / 1800.0);
    }
    auto d = ks_against_beta_1_2(xs);
    CHECK(d < 1.36 / std::sqrt(static_cast<double>(runs)) + 2.0 / 1800.0);
}

TEST_CASE("beta cell masses are the CDF differences and sum to one", "[client][policy][beta]") {
    CHECK(beta_1_2_cell_mass(0, 1) == Approx(1.0));
    CHECK(beta_1_2_cell_mass(0, 4) == Approx(1.0 - 0.75 * 0.75));
    CHECK(beta_1_2_cell_mass(3, 4) == Approx(0.25 * 0.25));
    double sum = 0;
    for (int i = 0; i < 1000; ++i)
        sum += beta_1_2_cell_mass(i, 1000);
    CHECK(sum == Approx(1.0));
    CHECK(beta_1_2_cell_mass(1000, 1000) == 0.0);
    CHECK(beta_1_2_cell_mass(-1, 1000) == 0.0);
}

TEST_CASE("priorities fall in doubling tiers along the wanted order", "[client][policy]") {
    CHECK(priority_for_rank(0, 4) == 7);
    CHECK(priority_for_rank(3, 4) == 7);
    CHECK(priority_for_rank(4, 4) == 6);
    CHECK(priority_for_rank(7, 4) == 6);
    CHECK(priority_for_rank(8, 4) == 5);
    CHECK(priority_for_rank(15, 4) == 5);
    CHECK(priority_for_rank(16, 4) == 4);
    CHECK(priority_for_rank(31, 4) == 4);
    CHECK(priority_for_rank(32, 4) == 3);
    CHECK(priority_for_rank(64, 4) == 2);
    CHECK(priority_for_rank(128, 4) == 1);
    CHECK(priority_for_rank(100000, 4) == 1);
    auto s = SwarmSnapshot::empty(PieceCount(300));
    auto plan = make_policy(PickerKind::beta, {})->plan(s);
    for (std::size_t r = 1; r < plan.wanted.size(); ++r)
        CHECK(plan.priority[static_cast<std::size_t>(plan.wanted[r].value())] <=
              plan.priority[static_cast<std::size_t>(plan.wanted[r - 1].value())]);
}

TEST_CASE("in-order pieces get deadlines from the playhead's position", "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(30));
    s.playhead = PieceIndex(2);
    s.horizon = PieceCount(3);
    s.piece_duration = 1000ms;
    s.into_playhead_piece = 250ms;
    s.availability[6] = 0;
    auto plan = make_policy(PickerKind::inorder, {.deadline_pieces = 3})->plan(s);
    REQUIRE(plan.deadlines.size() == 3);
    CHECK(plan.deadlines[0] == PieceDeadline{PieceIndex(5), 2750ms});
    CHECK(plan.deadlines[1] == PieceDeadline{PieceIndex(7), 4750ms});  // 6: no peer has it
    CHECK(plan.deadlines[2] == PieceDeadline{PieceIndex(8), 5750ms});
    CHECK(make_policy(PickerKind::beta, {})->plan(s).deadlines.empty());
}

TEST_CASE("every policy puts the urgent pieces first, in playback order, with deadlines",
          "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(40));
    s.playhead = PieceIndex(8);
    s.urgent = PieceCount(3);  // 8, 9 and 10: nobody but peers can bring them
    s.piece_duration = 1000ms;
    s.had.set(PieceIndex(9));
    for (int p = 0; p < 40; ++p)
        s.availability[static_cast<std::size_t>(p)] = p % 2 == 0 ? 2 : 1;  // rarest would start with 11
    for (auto k : {PickerKind::rarest, PickerKind::inorder, PickerKind::beta, PickerKind::hybrid,
                   PickerKind::adaptive}) {
        INFO(to_string(k));
        auto plan = make_policy(k, {.seed = 7})->plan(s);
        REQUIRE(plan.wanted.size() == 31);  // 8..39 but 9
        CHECK(first(plan.wanted, 2) == idx({8, 10}));
        REQUIRE(plan.deadlines.size() >= 2);
        CHECK(plan.deadlines[0] == PieceDeadline{PieceIndex(8), 0ms});
        CHECK(plan.deadlines[1] == PieceDeadline{PieceIndex(10), 2000ms});
        CHECK(plan.give_up.empty());
        std::set<PieceIndex> distinct(plan.wanted.begin(), plan.wanted.end());
        CHECK(distinct.size() == plan.wanted.size());
    }
    // Without urgency beta and rarest order the same pieces their own way.
    s.urgent = PieceCount(0);
    CHECK(make_policy(PickerKind::rarest, {.seed = 7})->plan(s).wanted.front() != PieceIndex(8));
    CHECK(make_policy(PickerKind::beta, {.seed = 7})->plan(s).deadlines.empty());
}

TEST_CASE("every policy asks peers first for the pieces the server refused, even inside the horizon",
          "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(40));
    s.playhead = PieceIndex(8);
    s.horizon = PieceCount(4);  // 8..11 are the server's
    s.piece_duration = 1000ms;
    s.refused = PieceSet(PieceCount(40));
    for (int p : {9, 20, 30})
        s.refused.set(PieceIndex(p));
    s.had.set(PieceIndex(30));  // it arrived meanwhile: nothing to ask for
    // The server is retrying 9 and 20 (and fetching 10): they are in its hands, yet peers are asked for the
    // refused ones.
    for (int p : {9, 10, 20})
        s.server_fetching.set(PieceIndex(p));
    for (int p = 0; p < 40; ++p)
        s.availability[static_cast<std::size_t>(p)] = p % 2 == 0 ? 2 : 1;
    for (auto k : {PickerKind::rarest, PickerKind::inorder, PickerKind::beta, PickerKind::hybrid,
                   PickerKind::adaptive}) {
        INFO(to_string(k));
        auto plan = make_policy(k, {.seed = 7})->plan(s);
        CHECK(first(plan.wanted, 2) == idx({9, 20}));
        REQUIRE(plan.deadlines.size() >= 2);
        CHECK(plan.deadlines[0] == PieceDeadline{PieceIndex(9), 1000ms});
        CHECK(plan.deadlines[1] == PieceDeadline{PieceIndex(20), 12000ms});
        CHECK(plan.give_up == idx({8, 10, 11}));  // the refused one is not given up
        CHECK(std::count(plan.wanted.begin(), plan.wanted.end(), PieceIndex(20)) == 1);
        CHECK(std::count(plan.wanted.begin(), plan.wanted.end(), PieceIndex(30)) == 0);
        CHECK(std::count(plan.wanted.begin(), plan.wanted.end(), PieceIndex(10)) == 0);
    }
    // Without refusals the horizon is the server's alone.
    s.refused = PieceSet();
    auto plan = make_policy(PickerKind::inorder, {})->plan(s);
    CHECK(plan.give_up == idx({8, 9, 10, 11}));
    CHECK(plan.wanted.front() == PieceIndex(12));
}

TEST_CASE("a bounded buffer limits wanted pieces and past pieces come last", "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(30));
    s.playhead = PieceIndex(10);
    s.request_end = PieceIndex(15);
    s.want_past_pieces = true;
    s.had.set(PieceIndex(3));
    auto plan = make_policy(PickerKind::inorder, {})->plan(s);
    std::vector<PieceIndex> expected = idx({10, 11, 12, 13, 14, 0, 1, 2, 4, 5, 6, 7, 8, 9});
    CHECK(plan.wanted == expected);
    CHECK(plan.priority[0] == 1);
    CHECK(plan.priority[15] == 0);
    CHECK(plan.priority[10] == 7);
}

TEST_CASE("a snapshot with short vectors is read as pieces nobody has", "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(10));
    s.availability.resize(4);
    auto plan = make_policy(PickerKind::inorder, {})->plan(s);
    CHECK(first(plan.wanted, 4) == idx({0, 1, 2, 3}));
    CHECK(plan.wanted.size() == 10);
}

TEST_CASE("priority changes list only the pieces whose priority differs", "[client][policy]") {
    using Change = std::pair<PieceIndex, std::uint8_t>;
    CHECK(priority_changes({1, 7, 0, 4}, {1, 6, 0, 4}) == std::vector<Change>{{PieceIndex(1), 6}});
    CHECK(priority_changes({}, {0, 3}) == std::vector<Change>{{PieceIndex(1), 3}});
    CHECK(priority_changes({2, 2}, {2, 2}).empty());
    // Applying the diff to the old vector yields the new plan.
    auto s = SwarmSnapshot::empty(PieceCount(100));
    auto policy = make_policy(PickerKind::hybrid, {.seed = 5});
    s.inorder_window = PieceCount(10);
    auto before = policy->plan(s);
    s.playhead = PieceIndex(4);
    s.had.set(PieceIndex(0));
    s.had.set(PieceIndex(1));
    auto after = policy->plan(s);
    auto applied = before.priority;
    auto changes = priority_changes(applied, after.priority);
    CHECK_FALSE(changes.empty());
    CHECK(changes.size() < 100);
    for (auto [p, prio] : changes)
        applied[static_cast<std::size_t>(p.value())] = prio;
    CHECK(applied == after.priority);
}

TEST_CASE("a buffer window that ends inside the horizon wants nothing from peers", "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(40));
    s.playhead = PieceIndex(10);
    s.horizon = PieceCount(6);
    s.inorder_window = PieceCount(20);
    s.request_end = PieceIndex(12);
    for (auto k : {PickerKind::rarest, PickerKind::inorder, PickerKind::beta, PickerKind::hybrid}) {
        INFO(to_string(k));
        auto plan = make_policy(k, {})->plan(s);
        CHECK(plan.wanted.empty());
        CHECK(plan.give_up == idx({10, 11, 12, 13, 14, 15}));
        CHECK(std::count(plan.priority.begin(), plan.priority.end(), 0) == 40);
    }
}

TEST_CASE("peers are asked only within the lookahead of the first piece still to ask for",
          "[client][policy]") {
    auto s = SwarmSnapshot::empty(PieceCount(100));
    s.playhead = PieceIndex(10);
    s.horizon = PieceCount(2);  // 10, 11 are the server's
    s.inorder_window = PieceCount(30);
    s.lookahead = PieceCount(5);
    for (auto k : {PickerKind::rarest, PickerKind::inorder, PickerKind::beta, PickerKind::hybrid,
                   PickerKind::adaptive}) {
        INFO(to_string(k));
        auto plan = make_policy(k, {.seed = 4})->plan(s);
        auto wanted = plan.wanted;
        std::sort(wanted.begin(), wanted.end());
        CHECK(wanted == idx({12, 13, 14, 15, 16}));
        CHECK(std::count(plan.priority.begin(), plan.priority.end(), 0) == 95);
    }
    // Pieces had or with the server move the lookahead on; a missing piece inside it holds it.
    s.had.set(PieceIndex(12));
    s.server_fetching.set(PieceIndex(13));
    s.had.set(PieceIndex(15));
    auto plan = make_policy(PickerKind::inorder, {})->plan(s);
    CHECK(plan.wanted == idx({14, 16, 17, 18}));
    // A bounded buffer still bounds it.
    s.request_end = PieceIndex(17);
    plan = make_policy(PickerKind::inorder, {})->plan(s);
    CHECK(plan.wanted == idx({14, 16}));
}
