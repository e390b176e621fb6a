// The part the client's end-to-end tests share (client_tests and client_playback_tests): the real
// toast-server with one ingested title and the real toast-tracker, each a child process on a free 127.0.0.1
// port, and toast-client instances started against them. Everything lives in one temporary directory that
// goes with the fixture, and the children are stopped with it:
//   server.json, d0/, d1/   the server's config and its two disks
//   movie.torrent           the torrent the ingest writes, announcing to the tracker
//   logs/                   stdout and stderr of the server, the tracker and (by default) the clients
//   <who>/, <who>.stats     a client's save dir and its stats file
// A step that fails (ingest, a port that never opens) fails the running test case.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/core/stats.hpp"
#include "test_support.hpp"

namespace toast::client::testing {

class SwarmFixture {
  public:
    // Picks the two ports and writes server.json; starts nothing. `server_log_level` is the server's
    // "log_level"; empty leaves the server's default.
    explicit SwarmFixture(const std::string& server_log_level = {});
    SwarmFixture(const SwarmFixture&) = delete;
    SwarmFixture& operator=(const SwarmFixture&) = delete;

    // Merges `patch` (a JSON object, RFC 7386) into server.json: signed-URL keys, TLS, telemetry limits.
    // Before ingest() for what ingest reads (public_url, tls).
    void patch_server_config(const std::string& patch);
    // `toast-server sign` with `args` (--subscriber, --scope, --lifetime, ...): the token.
    std::string sign(const std::vector<std::string>& args) const;
    // The server's /metrics, over plain HTTP (a TLS server's admin listener, if it has one, else its port).
    std::string server_metrics(std::uint16_t port = 0) const;
    // A series' value in server_metrics() (`series` is the name and labels as printed), or -1 if absent.
    double server_metric(const std::string& series, std::uint16_t port = 0) const;

    // `toast-server ingest` of `media` (written by the test, under dir()) as `title` at `bitrate` bytes per
    // second, writing torrent(); `options` are more ingest options, such as {"--piece-size", "32KiB"}.
    void ingest(const std::string& title, const std::filesystem::path& media, const std::string& bitrate,
                const std::vector<std::string>& options = {});
    // The tracker keeps its swarms in tracker_state() and saves them every second, so one killed and started
    // again knows the peers that announced before. `extra_config` (a JSON object) adds to its config, e.g.
    // {"passkeys": FILE}.
    void start_tracker(const std::string& extra_config = "{}");
    toast::testing::ChildProcess& tracker() { return *tracker_; }
    std::uint16_t tracker_port() const { return tracker_port_; }
    void kill_tracker();
    void start_server();
    void stop_server();

    // `toast-client <command> torrent()` saving into save_dir(who), its stats in stats(who), listening on any
    // port of 127.0.0.1 unless `options` has --listen, then `options`; stdout and stderr go to `log_dir`
    // (logs() if not given).
    std::unique_ptr<toast::testing::ChildProcess> start_client(
        const std::string& command, const std::string& who, const std::vector<std::string>& options,
        const std::optional<std::filesystem::path>& log_dir = {});
    // A seed: the title's bytes copied into save_dir(who), `stream --behavior seed`, staying until stopped.
    std::unique_ptr<toast::testing::ChildProcess> seed(const std::string& who,
                                                       const std::vector<std::string>& options = {});

    // True once the tracker counts `n` seeders (so clients started now are told about them), false after
    // `timeout`.
    bool wait_for_seeders(int n, std::chrono::milliseconds timeout) const;

    const std::filesystem::path& dir() const { return dir_.path(); }
    std::filesystem::path logs() const { return dir_ / "logs"; }
    std::filesystem::path torrent() const { return dir_ / "movie.torrent"; }
    const std::filesystem::path& media() const { return media_; }
    const std::string& title() const { return title_; }
    std::filesystem::path save_dir(const std::string& who) const { return dir_ / who; }
    std::filesystem::path stats(const std::string& who) const { return dir_ / (who + ".stats"); }
    // Where a client stores the title.
    std::filesystem::path data(const std::string& who) const { return save_dir(who) / title_; }
    std::string announce_url() const;
    std::filesystem::path tracker_state() const { return dir_ / "tracker.state"; }
    std::uint16_t server_port() const { return server_port_; }

  private:
    toast::testing::TempDir dir_;
    std::uint16_t server_port_;
    std::uint16_t tracker_port_;
    std::string title_;
    std::filesystem::path media_;
    std::unique_ptr<toast::testing::ChildProcess> tracker_;
    std::unique_ptr<toast::testing::ChildProcess> server_;
};

// Every record of a client's stats file, in order. A last line cut short (the client is writing it right now)
// is left out; any other line that does not parse as a stats record fails the running test case.
std::vector<StatsRecord> read_stats(const std::filesystem::path& path);

}  // namespace toast::client::testing
