#include <catch2/catch.hpp>

#include "server/core/push_config.hpp"
#include "server/core/server_config.hpp"
#include "server/core/title_demand.hpp"
#include "toast/common/config.hpp"

using namespace toast::server;
using namespace std::chrono_literals;

TEST_CASE("a steady rate of starts reads as that many sessions per hour", "[server][demand]") {
    TitleDemand d(10min);
    TitleDemand::Time t{};
    // 60 starts an hour (one a minute) for five hours: many half-lives.
    for (int i = 0; i < 300; ++i) {
        t += 1min;
        d.record_start("movie", t);
    }
    CHECK(d.rate("movie", t) == Approx(60).epsilon(0.05));
    CHECK(d.rate("other", t) == 0);
    CHECK(d.starts() == 300);
    // A half-life later, half.
    CHECK(d.rate("movie", t + 10min) == Approx(d.rate("movie", t) / 2));
}

TEST_CASE("between starts every title fades alike, so the shares stay", "[server][demand]") {
    TitleDemand d(1h);
    TitleDemand::Time t{};
    d.seed("a", 30, t);
    d.seed("b", 10, t);
    const auto later = t + 7h;
    CHECK(d.rate("a", later) / d.rate("b", later) == Approx(3));
    auto rates = d.rates(later);
    REQUIRE(rates.size() == 2);
    CHECK(rates["a"] == Approx(30.0 / 128));
    // A forecast is a starting value: counted starts add to it.
    d.record_start("b", later);
    CHECK(d.rate("b", later) == Approx(10.0 / 128 + std::log(2.0)));
    CHECK(d.starts() == 1);
}

TEST_CASE("the forecast file names titles and their sessions per hour", "[server][demand]") {
    std::string error;
    auto f = parse_forecast(R"({"titles": {"t001": 12.5, "t002": 0}})", &error);
    REQUIRE(f);
    CHECK(f->at("t001") == 12.5);
    CHECK(f->at("t002") == 0);
    CHECK_FALSE(parse_forecast(R"({"titles": {"t001": -1}})", &error));
    CHECK(error == "titles.t001 must be a non-negative number of sessions per hour");
    CHECK_FALSE(parse_forecast(R"({"titles": {"t001": "many"}})", &error));
    CHECK_FALSE(parse_forecast(R"({"title": {}})", &error));
    CHECK(error == "unknown field \"title\"");
    CHECK_FALSE(parse_forecast("[1]", &error));
    CHECK(error == "not a JSON object");
}

TEST_CASE("the off-peak window's times", "[server][push]") {
    constexpr std::int64_t day = 24LL * 3600 * 1000, hour = 3600 * 1000;
    PushWindow w;  // daily 02:00-06:00 UTC
    const std::int64_t midnight = 19000 * day;
    CHECK(window_times(w, midnight + 1 * hour, 0) == WindowTimes{midnight + 2 * hour, midnight + 6 * hour});
    CHECK(window_times(w, midnight + 3 * hour, 0) == WindowTimes{midnight + 2 * hour, midnight + 6 * hour});
    CHECK(window_times(w, midnight + 6 * hour, 0) ==
          WindowTimes{midnight + day + 2 * hour, midnight + day + 6 * hour});
    // Past midnight: 23:00-05:00.
    w.start = 23h;
    w.end = 5h;
    CHECK(window_times(w, midnight + 1 * hour, 0) == WindowTimes{midnight - hour, midnight + 5 * hour});
    CHECK(window_times(w, midnight + 12 * hour, 0) ==
          WindowTimes{midnight + 23 * hour, midnight + 29 * hour});
    w.kind = PushWindow::Kind::after_start;
    w.start = 30s;
    w.end = 10min;
    CHECK(window_times(w, 5'000'000, 1'000'000) == WindowTimes{1'030'000, 1'600'000});
    w.kind = PushWindow::Kind::unix_time;
    w.start = 1000s;
    w.end = 2000s;
    CHECK(window_times(w, 0, 0) == WindowTimes{1'000'000, 2'000'000});
    CHECK(parse_time_of_day("02:30") == 9000s);
    CHECK(parse_time_of_day("23:59:59") == 86399s);
    CHECK_FALSE(parse_time_of_day("2:30"));
    CHECK_FALSE(parse_time_of_day("25:00"));
    CHECK_FALSE(parse_time_of_day("12:60"));
}

TEST_CASE("the demand and push sections of the server config", "[server][push]") {
    using nlohmann::json;
    auto base = json{{"disks", {"/a", "/b"}}};
    auto c = load_server_config(base);
    CHECK_FALSE(c.push.enabled);
    CHECK(c.demand.half_life == 1h);
    auto j = base;
    j["demand"] = {{"half_life", "10min"}, {"forecast", "/etc/toast/forecast.json"}};
    j["push"] = {{"window", {{"daily", {"23:00", "05:00"}}}},
                 {"rate", "4Mbps"},
                 {"replicas", 3},
                 {"peak_viewers_pct", 30},
                 {"refresh", "1min"}};
    c = load_server_config(j);
    CHECK(c.demand.half_life == 10min);
    CHECK(c.demand.forecast == std::filesystem::path("/etc/toast/forecast.json"));
    CHECK(c.push.enabled);
    CHECK(c.push.window.kind == PushWindow::Kind::daily);
    CHECK(c.push.window.start == 23h);
    CHECK(c.push.window.end == 5h);
    CHECK(c.push.rate == toast::BitRate(4'000'000));
    CHECK(c.push.replicas == 3);
    CHECK(c.push.box_ttl == 3min);
    auto refused = [&](json push) {
        auto k = base;
        k["push"] = std::move(push);
        try {
            load_server_config(k);
        } catch (const toast::ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    CHECK_THAT(refused({{"replicas", 1}}), Catch::Contains("push.replicas"));
    CHECK_THAT(refused({{"window", {{"daily", {"2am", "6am"}}}}}), Catch::Contains("push.window.daily"));
    CHECK_THAT(refused({{"window", {{"after_start", {"10min", "1min"}}}}}),
               Catch::Contains("the end must come after the start"));
    CHECK_THAT(refused({{"window", {{"daily", {"01:00", "02:00"}}, {"unix", {1, 2}}}}}),
               Catch::Contains("give one of daily, after_start and unix"));
    CHECK_THAT(refused({{"refresh", "10s"}, {"box_ttl", "5s"}}), Catch::Contains("push.box_ttl"));
    CHECK_THAT(refused({{"speed", 1}}), Catch::Contains("speed"));
}
