// `toast-client serve` against a signed TLS server: the box adds a title from the server's catalogue with its
// token and CA, plays it byte-identically from the server, reports its QoE when it stops, and refuses a
// server its CA did not sign.
#include <catch2/catch.hpp>

#include <fstream>

#include "service_bed.hpp"

using namespace std::chrono_literals;
using namespace toast::client::testing;

TEST_CASE("the service plays from a signed TLS server with its token file and CA, and reports its QoE",
          "[client][service][integration][access][tls]") {
    ServiceBed bed;
    toast::testing::TempDir pki_dir;
    const auto pki = toast::testing::make_test_pki(pki_dir.path());
    const auto admin = toast::testing::free_tcp_port();
    bed.patch_server_config(json{
        {"access", {{"keys", {{{"id", "k1"}, {"secret", std::string(64, 'e')}}}}}},
        {"tls", {{"certificate_chain", pki.server_cert.string()}, {"private_key", pki.server_key.string()}}},
        {"admin_listen", "127.0.0.1:" + std::to_string(admin)}}
                                .dump());
    bed.add_video("movie", 4, 440);
    bed.start_tracker();
    bed.start_server();
    const auto token_file = bed.dir() / "box.token";
    std::ofstream(token_file) << bed.sign({"--subscriber", "box-7", "--scope", "catalog"}) << "\n";
    const auto base = "https://127.0.0.1:" + std::to_string(bed.server_port());
    bed.start_service(
        {"--token-file", token_file.string(), "--ca-file", pki.ca.string(), "--telemetry-interval", "2s"});

    auto added = bed.call("POST", "/api/titles", "application/json",
                          json{{"url", base + "/torrents/movie.torrent"}}.dump());
    INFO(added.body);
    REQUIRE(added.status == 201);
    const auto id = added.j()["id"].get<std::string>();
    auto play = bed.call("POST", "/api/titles/" + id + "/play");
    REQUIRE(play.status == 200);
    auto player_url = play.j()["url"].get<std::string>();
    auto port = static_cast<std::uint16_t>(std::stoi(player_url.substr(player_url.rfind(':') + 1)));
    auto body =
        toast::testing::http_request(port, "GET", player_url.substr(player_url.find('/', 7)), {}, 60s);
    REQUIRE(body.status == 200);
    CHECK(body.body == toast::testing::read_file(bed.media_of("movie")));
    REQUIRE(bed.call("POST", "/api/titles/" + id + "/stop").status == 200);
    // The title's final report reaches the server (bounded wait: the report goes out after the stop).
    for (int i = 0; i < 50 && bed.server_metric("toast_qoe_sessions_ended_total", admin) < 1; ++i)
        std::this_thread::sleep_for(100ms);
    CHECK(bed.server_metric("toast_qoe_sessions_ended_total", admin) == 1);
    CHECK(bed.server_metric("toast_qoe_bytes_total{source=\"server\"}", admin) > 0);
    CHECK(bed.server_metric("toast_access_denied_total{reason=\"missing\"}", admin) == 0);
    bed.stop_service();

    // A box whose CA did not sign the server's certificate fetches nothing from it.
    bed.start_service({"--token-file", token_file.string(), "--ca-file", pki.other_ca.string()});
    auto refused = bed.call("POST", "/api/titles", "application/json",
                            json{{"url", base + "/torrents/movie.torrent"}}.dump());
    CHECK(refused.status == 502);
    CHECK_THAT(refused.j()["error"].get<std::string>(),
               Catch::Matchers::Contains("certificate verify failed"));
    bed.stop_service();
}
