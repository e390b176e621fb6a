// `toast-client serve` in a private SSL swarm: the box's passkey, certificate and key come from its config
// file (as the packaged service reads /etc/toast/client.json); a title it watched keeps seeding over TLS to
// another box with its own passkey and certificate, with the VoD server stopped.
#include <fstream>

#include "service_bed.hpp"
#include "test_pki.hpp"

using namespace toast::client::testing;

TEST_CASE("a box's service takes its passkey and certificate from its config and seeds a private SSL swarm",
          "[client][service][integration][private]") {
    ServiceBed bed;
    std::filesystem::create_directories(bed.dir() / "pki");
    auto ca = toast::testing::make_test_ca(bed.dir() / "pki", "operator");
    auto box = toast::testing::make_test_cert(bed.dir() / "pki", ca, "box");
    auto viewer_cert = toast::testing::make_test_cert(bed.dir() / "pki", ca, "viewer");
    const std::string box_key = "boxboxboxboxboxboxboxboxboxboxbo";
    const std::string viewer_key = "viewerviewerviewerviewerviewer00";
    std::ofstream(bed.dir() / "passkeys") << box_key << " box\n" << viewer_key << " viewer\n";

    // ServiceBed::add_video ingests with the fixture's options; a private SSL title needs its own.
    auto media = bed.dir() / "media-movie.ts";
    make_video(media, 6, 440);
    bed.ingest("movie.ts", media, std::to_string(std::filesystem::file_size(media) * 8 / 6),
               {"--piece-size", "32KiB", "--private", "--peer-ca", ca.cert.string()});
    const auto torrent = toast::testing::read_file(bed.torrent());
    bed.start_tracker(json{{"passkeys", (bed.dir() / "passkeys").string()}}.dump());
    bed.start_server();
    std::ofstream(bed.dir() / "client.json") << json{
        {"listen", "127.0.0.1:0"},
        {"passkey", box_key},
        {"ssl_cert", box.cert.string()},
        {"ssl_key", box.key.string()},
        {"ssl_listen", 0}}.dump();
    bed.start_service({"--config", (bed.dir() / "client.json").string()});
    auto id = bed.add(torrent);
    bed.play_through(id);
    REQUIRE(bed.call("POST", "/api/titles/" + id + "/stop").status == 200);
    auto stopped = bed.wait_status(
        id, [](const json& j) { return !j["checking"].get<bool>() && j["pieces_had"] == j["pieces"]; });
    REQUIRE(stopped["pieces_had"] == stopped["pieces"]);
    REQUIRE(bed.wait_for_seeders(1, 10s));

    bed.stop_server();
    auto viewer =
        bed.start_client("stream", "viewer",
                         {"--behavior", "download", "--log-level", "warn", "--passkey", viewer_key,
                          "--ssl-cert", viewer_cert.cert.string(), "--ssl-key", viewer_cert.key.string()});
    auto code = viewer->wait(60s);
    INFO(viewer->stderr_text());
    INFO("tracker: " + toast::testing::http_request(bed.tracker_port(), "GET", "/stats").body);
    INFO("box: " + bed.status(id).dump());
    INFO(bed.service_log());
    REQUIRE(code);
    CHECK(*code == 0);
    CHECK(toast::testing::read_file(bed.data("viewer")) == toast::testing::read_file(media));
    auto summary = read_stats(bed.stats("viewer")).back();
    CHECK(summary.bytes_from_server == 0);
    CHECK(summary.bytes_from_peers >= stopped["size"].get<std::uint64_t>());
    // Both boxes announced with their keys, and nobody was refused.
    auto metrics = toast::testing::http_request(bed.tracker_port(), "GET", "/metrics").body;
    CHECK(metrics.find("toast_tracker_refused_total{transport=\"http\",reason=\"no_passkey\"} 0\n") !=
          std::string::npos);
    CHECK(metrics.find("toast_tracker_refused_total{transport=\"http\",reason=\"unknown_passkey\"} 0\n") !=
          std::string::npos);
    bed.stop_service();
}
