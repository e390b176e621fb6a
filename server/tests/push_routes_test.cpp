#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "server/core/push_routes.hpp"
#include "server/core/request_handler.hpp"

using namespace toast;
using namespace toast::server;

namespace {

class FakePush : public PushControl {
  public:
    std::map<std::string, double> demand() override { return {{"movie", 2.5}}; }
    bool record_play(std::string_view info_hash, std::string_view box) override {
        plays.push_back(std::string(info_hash) + "/" + std::string(box));
        return info_hash == std::string(40, 'a');
    }
    std::optional<BoxAssignment> assign(const BoxRegistration& box) override {
        last = box;
        BoxAssignment a;
        a.box = box.box;
        a.generation = 3;
        a.window = {1000, 2000};
        a.rate = BitRate(2'000'000);
        a.quota = box.quota.value_or(Bytes(100));
        a.upload = box.upload.value_or(BitRate(1'000'000));
        a.refresh = std::chrono::seconds(300);
        a.titles.push_back(
            {"movie", std::string(40, 'a'), Bytes(262144), 10, {{0, 1}, {4, 5}}, Bytes(4 * 262144)});
        return a;
    }
    std::optional<std::pair<PushPlan, std::uint64_t>> plan() override { return std::pair{PushPlan{}, 3}; }
    std::vector<std::string> plays;
    BoxRegistration last;
};

HttpRequest request(std::string_view method, std::string_view target) {
    HttpRequest r;
    r.method = method;
    r.target = target;
    return r;
}

std::string path_of(std::string_view target) {
    return std::string(target.substr(0, target.find('?')));
}

HttpResponse serve(std::string_view method, std::string_view target, PushControl* push) {
    return serve_push(request(method, target), path_of(target), push);
}

}  // namespace

TEST_CASE("a box registers and gets its assignment as JSON", "[server][push]") {
    FakePush push;
    auto r = serve("GET", "/push/assignment?box=b-17&upload_bps=1500000&quota=1048576", &push);
    REQUIRE(r.status == 200);
    CHECK(r.header("Content-Type") == "application/json");
    CHECK(r.header("Cache-Control") == "no-store");
    CHECK(push.last.box == "b-17");
    CHECK(push.last.upload == BitRate(1'500'000));
    CHECK(push.last.quota == Bytes(1048576));
    auto j = nlohmann::json::parse(r.body);
    CHECK(j["box"] == "b-17");
    CHECK(j["generation"] == 3);
    CHECK(j["window"] == nlohmann::json{{"start_ms", 1000}, {"end_ms", 2000}});
    CHECK(j["rate_bps"] == 2'000'000);
    CHECK(j["quota"] == 1048576);
    CHECK(j["upload_bps"] == 1'500'000);
    CHECK(j["refresh_s"] == 300);
    CHECK(j["plan"].get<std::string>().size() == 16);
    CHECK(j["titles"] ==
          nlohmann::json::parse(R"([{"name": "movie", "info_hash": ")" + std::string(40, 'a') +
                                R"(", "torrent": "/torrents/movie.torrent", "piece_size": 262144,
                                                  "pieces": 10, "ranges": [[0, 1], [4, 5]], "bytes": 1048576}])"));
}

TEST_CASE("bad registrations are refused with the parameter named", "[server][push]") {
    FakePush push;
    auto reason = [&](std::string_view target) {
        auto r = serve("GET", target, &push);
        CHECK(r.status == 400);
        return r.reason;
    };
    CHECK(reason("/push/assignment") == "the box parameter is required");
    CHECK(reason("/push/assignment?box=../etc") ==
          "box '../etc' is not a box id (1 to 64 of A-Z a-z 0-9 . _ -)");
    CHECK(reason("/push/assignment?box=a&upload_bps=fast") ==
          "upload_bps 'fast' is not a whole number of bits per second in [1000, 1e11]");
    CHECK(reason("/push/assignment?box=a&quota=0") ==
          "quota '0' is not a whole number of bytes in [1, 2^50]");
    CHECK(reason("/push/assignment?box=a&box=b") == "parameter 'box' given twice");
    CHECK(reason("/push/assignment?box=a&path=/etc") == "unknown parameter 'path' (box, upload_bps, quota)");
    CHECK(reason("/push/assignment?box=%zz") == "malformed percent-encoding in the query");
    CHECK(serve("POST", "/push/assignment?box=a", &push).status == 405);
    // Without push: 404 saying so.
    auto off = serve("GET", "/push/assignment?box=a", nullptr);
    CHECK(off.status == 404);
    CHECK(off.reason == "push is not enabled on this server (config \"push\")");
    CHECK(serve("GET", "/push/plan", nullptr).status == 404);
    auto plan = serve("GET", "/push/plan", &push);
    CHECK(plan.status == 200);
    CHECK(nlohmann::json::parse(plan.body)["generation"] == 3);
}

TEST_CASE("a box reports a session start by the title's info-hash", "[server][push]") {
    FakePush push;
    const std::string hash(40, 'a');
    auto r = serve("POST", "/catalog/plays?info_hash=" + hash + "&box=b1", &push);
    CHECK(r.status == 204);
    CHECK(push.plays == std::vector<std::string>{hash + "/b1"});
    CHECK(serve("POST", "/catalog/plays?info_hash=" + std::string(40, 'b'), &push).status == 404);
    CHECK(serve("POST", "/catalog/plays?info_hash=XYZ", &push).reason ==
          "info_hash must be the title's 40 lower-case hex digits");
    CHECK(serve("GET", "/catalog/plays?info_hash=" + hash, &push).status == 405);
    CHECK(serve("POST", "/catalog/plays?info_hash=" + hash + "&x=1", &push).status == 400);
}
