#include <catch2/catch.hpp>

#include "sim/core/report.hpp"

using namespace toast::sim;

TEST_CASE("percentiles interpolate between closest ranks as the testbed's", "[sim][report]") {
    CHECK(!percentile({}, 50));
    CHECK(*percentile({3, 1, 2}, 50) == 2);
    CHECK(*percentile({1, 2, 3, 4}, 50) == 2.5);
    CHECK(*percentile({0, 10}, 95) == Approx(9.5));
}

TEST_CASE("unicast bins spread each session's bitrate over its watch", "[sim][report]") {
    RunRecords r;
    r.bitrate_bps = 8e6;  // 1 MB/s
    r.bin_seconds = 10;
    SessionRecord s;
    s.start_s = 5;
    s.watch_s = 20;
    r.sessions = {s};
    const auto bins = unicast_bins(r, 4);
    CHECK(bins[0] == Approx(5e6));
    CHECK(bins[1] == Approx(10e6));
    CHECK(bins[2] == Approx(5e6));
    CHECK(bins[3] == 0);
}

TEST_CASE("a single-title report has the testbed's fields and reduction", "[sim][report]") {
    RunRecords r;
    r.scenario = "x";
    r.kind = "title";
    r.title_bytes = {10'000'000};
    r.title_names = {"title"};
    r.bitrate_bps = 2e6;
    for (int i = 0; i < 4; ++i) {
        SessionRecord s;
        s.box = i;
        s.completed = true;
        s.start_s = i * 3.0;
        s.end_s = s.start_s + 40;
        s.watch_s = 40;
        s.upload_cap_bps = 2e6;
        s.bytes_uploaded = 5'000'000;
        s.bytes_from_server = 2'500'000;
        s.startup_ms = 10 * (i + 1);
        r.sessions.push_back(s);
    }
    r.vod_bytes = 10'000'000;
    r.seed_bytes = 2'000'000;
    r.server_bins = {1e6, 2e6, 3e6, 4e6, 2e6};
    const auto j = make_report(r, 75.0);
    CHECK(j["unicast_bytes"] == 40'000'000);
    CHECK(j["server_bytes"] == 12'000'000);
    CHECK(j["reduction_pct"].get<double>() == Approx(70.0));
    CHECK(j["vod_share_pct"].get<double>() == Approx(100.0 * 10 / 12));
    CHECK(j["ceiling_pct"] == 75.0);
    CHECK(j["completed_clients"] == 4);
    CHECK(j["upload_capacity_bytes"] == 4 * 10'000'000);
    CHECK(j["upload_used_pct"].get<double>() == Approx(50.0));
    CHECK(j["startup_ms"]["median"].get<double>() == 25.0);
    CHECK(j["per_client"].size() == 4);
    CHECK(j.contains("peak_reduction_pct"));
    CHECK(j["server_peak_bps"].get<double>() == Approx(*percentile(r.server_bins, 95) * 8 / 10));
    const auto md = render_markdown(j);
    CHECK(md.find("**70.0%**") != std::string::npos);
}

TEST_CASE("a catalogue report counts what each session played as unicast, per title", "[sim][report]") {
    RunRecords r;
    r.kind = "catalogue";
    r.scenario = "c";
    r.title_names = {"t001", "t002"};
    r.title_bytes = {4'000'000, 4'000'000};
    r.bitrate_bps = 8e6;
    SessionRecord a;
    a.title = 0;
    a.watch_s = 2;  // 2 MB played
    a.bytes_from_server = 1'000'000;
    SessionRecord b;
    b.title = 1;
    b.watch_s = 4;
    r.sessions = {a, b};
    r.vod_bytes = 1'000'000;
    const auto j = make_report(r, std::nullopt);
    CHECK(j["unicast_bytes"] == 6'000'000);
    CHECK(j["reduction_pct"].get<double>() == Approx(100.0 * 5 / 6));
    REQUIRE(j["per_title"].size() == 2);
    CHECK(j["per_title"][0]["reduction_pct"].get<double>() == Approx(50.0));
    CHECK(j["ceiling_pct"].is_null());
}

TEST_CASE("a catalogue report bounds its peak by every box's uplink over the peak's demand, at most 100%",
          "[sim][report]") {
    RunRecords r;
    r.kind = "catalogue";
    r.scenario = "c";
    r.title_names = {"t001"};
    r.title_bytes = {40'000'000};
    r.bitrate_bps = 8e6;
    r.bin_seconds = 10;
    r.server_bins = std::vector<double>(4, 0.0);
    // Four sessions watching the whole 40 s at once: unicast's peak is 4 x 8 Mbps = 32 Mbps.
    for (int i = 0; i < 4; ++i) {
        SessionRecord s;
        s.box = i;
        s.start_s = 0;
        s.end_s = 40;
        s.watch_s = 40;
        r.sessions.push_back(s);
    }
    // Six boxes (two idle) at 2 Mbps up, one at 4: 16 Mbps, half the peak's demand.
    for (int b = 0; b < 7; ++b)
        r.boxes.push_back({b, b == 6 ? 4e6 : 2e6, b < 4 ? 1 : 0, 0, 0, 0});
    auto j = make_report(r, std::nullopt);
    CHECK(j["unicast_peak_bps"].get<double>() == Approx(32e6));
    CHECK(j["peak_bound_pct"].get<double>() == Approx(50.0));
    CHECK(j["upload_bound_pct"].is_null());  // a single title's bound, not a catalogue's
    CHECK(render_markdown(j).find("(peak bound 50.0%: every box's upload over the peak's demand)") !=
          std::string::npos);
    // Uplinks past the peak's demand: capped at 100%.
    r.boxes.push_back({7, 40e6, 0, 0, 0, 0});
    j = make_report(r, std::nullopt);
    CHECK(j["peak_bound_pct"].get<double>() == 100.0);
    // No demand (nobody watched): no bound.
    r.sessions.clear();
    j = make_report(r, std::nullopt);
    CHECK(j["peak_bound_pct"].is_null());
}

TEST_CASE("a catalogue's peak is billed by nearest rank", "[sim][report]") {
    std::vector<double> v;
    for (int i = 1; i <= 30; ++i)
        v.push_back(i);
    CHECK(nearest_rank(v, 95) == 29.0);  // ceil(28.5) = the 29th
    CHECK(*percentile(v, 95) == Approx(28.55));
    CHECK(nearest_rank({7}, 95) == 7.0);
    CHECK(!nearest_rank({}, 95));
}
