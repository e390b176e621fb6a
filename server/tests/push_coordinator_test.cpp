// The coordinator over a store of titles with real torrents: demand counted from reported starts and seeded
// from a forecast file, boxes registering, plans kept until a box joins or leaves or demand moves.
#include <catch2/catch.hpp>

#include <fstream>

#include "fake_store.hpp"
#include "server/core/push_routes.hpp"
#include "server/io/push_coordinator.hpp"
#include "server/io/title_torrent.hpp"
#include "test_support.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;

namespace {

// A store whose titles have torrents (with the given piece size) and info-hashes.
class TorrentStore : public toast::server::testing::FakeStore {
  public:
    void add_title(const std::string& name, std::size_t size, std::uint64_t piece_size = 16 * 1024) {
        add(name, std::string(size, 'x'), BitRate(4'000'000));
        TorrentSpec spec;
        spec.title = name;
        spec.size = size;
        spec.piece_size = piece_size;
        spec.piece_hashes.resize((size + piece_size - 1) / piece_size);
        for (auto& h : spec.piece_hashes)
            h[0] = 1;  // libtorrent refuses an all-zero hash as unset
        spec.bitrate = BitRate(4'000'000);
        auto t = make_title_torrent(spec);
        torrents_[name] = t.bytes;
        hashes_[name] = t.info_hash;
    }
    std::vector<std::shared_ptr<const TitleInfo>> titles() const override {
        auto list = FakeStore::titles();
        std::vector<std::shared_ptr<const TitleInfo>> out;
        for (auto& t : list) {
            auto copy = std::make_shared<TitleInfo>(*t);
            if (hashes_.count(t->name)) copy->info_hash = hashes_.at(t->name);
            out.push_back(copy);
        }
        return out;
    }
    std::optional<std::string> torrent(const TitleInfo& t) const override {
        auto it = torrents_.find(t.name);
        if (it == torrents_.end()) return std::nullopt;
        return it->second;
    }
    std::string hash(const std::string& name) const { return hashes_.at(name); }

  private:
    std::map<std::string, std::string> torrents_, hashes_;
};

struct FakeClocks {
    std::chrono::steady_clock::time_point steady{};
    std::int64_t unix_ms = 1'700'000'000'000;
    PushCoordinator::Clocks clocks() {
        return {[this] { return steady; }, [this] { return unix_ms; }};
    }
};

PushConfig push_config() {
    PushConfig p;
    p.enabled = true;
    p.window.kind = PushWindow::Kind::after_start;
    p.window.start = 0s;
    p.window.end = 600s;
    p.peak_viewers = 0.5;
    p.box_upload = BitRate(1'000'000);
    p.box_quota = Bytes(4 << 20);
    p.chunk_pieces = 4;
    p.refresh = 10s;
    p.box_ttl = 30s;
    return p;
}

}  // namespace

TEST_CASE("the coordinator plans the store's titles over the boxes that ask, and keeps the plan",
          "[server][push]") {
    TorrentStore store;
    store.add_title("a", 1 << 20);
    store.add_title("b", 1 << 20);
    toast::testing::TempDir dir;
    std::ofstream(dir / "forecast.json") << R"({"titles": {"a": 30, "b": 10, "gone": 5}})";
    DemandConfig demand;
    demand.forecast = dir / "forecast.json";
    FakeClocks clock;
    PushCoordinator c(demand, push_config(), store, clock.clocks());

    auto d = c.demand();
    CHECK(d["a"] == 30);
    CHECK(d["b"] == 10);

    auto first = c.assign({"box1", std::nullopt, std::nullopt});
    REQUIRE(first);
    CHECK(c.generation() == 1);
    CHECK(first->window == WindowTimes{1'700'000'000'000, 1'700'000'600'000});
    CHECK(first->quota == Bytes(4 << 20));
    CHECK(first->refresh == 10s);
    // One box cannot hold a stripe twice over: nothing is placed until a second box comes.
    CHECK(first->titles.empty());
    auto second = c.assign({"box2", BitRate(2'000'000), Bytes(8 << 20)});
    REQUIRE(second);
    CHECK(c.generation() == 2);
    REQUIRE_FALSE(second->titles.empty());
    CHECK(second->titles[0].name == "a");
    CHECK(second->titles[0].info_hash == store.hash("a"));
    CHECK(second->titles[0].piece_size == Bytes(16 * 1024));
    CHECK(second->titles[0].pieces == 64);
    CHECK(second->upload == BitRate(2'000'000));

    // Asking again changes nothing; a start that barely moves the shares keeps the plan.
    clock.steady += 5s;
    auto again = c.assign({"box1", std::nullopt, std::nullopt});
    CHECK(c.generation() == 2);
    CHECK(assignment_json(*again).find("\"generation\":2") != std::string::npos);
    CHECK(c.record_play(store.hash("b"), "box1"));
    CHECK_FALSE(c.record_play(std::string(40, '0'), "box1"));
    c.assign({"box1", std::nullopt, std::nullopt});
    CHECK(c.generation() == 2);
    // Many starts of b turn the ranking: a new plan.
    for (int i = 0; i < 200; ++i)
        c.record_play(store.hash("b"), "box2");
    c.assign({"box1", std::nullopt, std::nullopt});
    CHECK(c.generation() == 3);
    CHECK(c.plan()->first.titles.front().name == "b");

    // box2 goes quiet: after box_ttl it leaves the plan.
    clock.steady += 20s;
    c.assign({"box1", std::nullopt, std::nullopt});
    CHECK(c.boxes() == 2);
    clock.steady += 20s;
    auto alone = c.assign({"box1", std::nullopt, std::nullopt});
    CHECK(c.boxes() == 1);
    CHECK(c.generation() == 4);
    CHECK(alone->titles.empty());
}

TEST_CASE("a coordinator without push still counts demand, and refuses a bad forecast", "[server][push]") {
    TorrentStore store;
    store.add_title("a", 1 << 20);
    PushCoordinator c(DemandConfig{}, PushConfig{}, store);
    CHECK_FALSE(c.assign({"box1", std::nullopt, std::nullopt}));
    CHECK_FALSE(c.plan());
    CHECK(c.record_play(store.hash("a"), ""));
    CHECK(c.demand()["a"] > 0);

    toast::testing::TempDir dir;
    std::ofstream(dir / "bad.json") << R"({"titles": {"a": "lots"}})";
    DemandConfig bad;
    bad.forecast = dir / "bad.json";
    CHECK_THROWS_WITH(PushCoordinator(bad, PushConfig{}, store),
                      Catch::Contains("bad.json: titles.a must be a non-negative number"));
    bad.forecast = dir / "missing.json";
    CHECK_THROWS_WITH(PushCoordinator(bad, PushConfig{}, store), Catch::Contains("demand.forecast"));
}
