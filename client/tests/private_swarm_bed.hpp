// The private swarm of the client's integration tests: the server ingests the title private and with the
// operator's CA (--private --peer-ca), the tracker admits only the passkeys of its file, and every box
// holds a passkey and a certificate signed by that CA. Boxes are toast-client processes on 127.0.0.1.
#pragma once

#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/core/stats.hpp"
#include "swarm_fixture.hpp"
#include "test_pki.hpp"
#include "test_support.hpp"

namespace toast::client::testing {

inline constexpr std::uint64_t kPrivateTitle = 6 * 1024 * 1024;
inline constexpr const char* kPrivateBitrate = "3145728";  // 6 MiB plays for 16 s

class PrivateSwarmBed : public SwarmFixture {
  public:
    // `ssl`: ingest with --peer-ca (an SSL torrent); `boxes`: the names that get a passkey and a certificate;
    // `server_patch`: merged into the server's config before the ingest (signed-URL keys, TLS).
    explicit PrivateSwarmBed(bool ssl = true, std::vector<std::string> boxes = {"seed", "v1", "v2", "v3"},
                             const std::string& server_patch = {}) {
        if (!server_patch.empty()) patch_server_config(server_patch);
        std::filesystem::create_directories(dir() / "pki");
        ca = toast::testing::make_test_ca(dir() / "pki", "operator");
        toast::testing::write_random_file(dir() / "media.bin", kPrivateTitle, 37);
        std::vector<std::string> options{"--private"};
        if (ssl) options.insert(options.end(), {"--peer-ca", ca.cert.string()});
        ingest("movie", dir() / "media.bin", kPrivateBitrate, options);
        std::string file;
        for (const auto& b : boxes) {
            std::string key = b;
            while (key.size() < 32)
                key += "k";
            keys[b] = key;
            certs.emplace(b, toast::testing::make_test_cert(dir() / "pki", ca, b));
            file += key + " " + b + "\n";
        }
        std::ofstream(passkey_file()) << file;
        start_tracker(nlohmann::json{{"passkeys", passkey_file().string()}}.dump());
        start_server();
    }

    std::filesystem::path passkey_file() const { return dir() / "passkeys"; }

    // --passkey and --ssl-cert/--ssl-key of box `who`.
    std::vector<std::string> credentials(const std::string& who) const {
        const auto& c = certs.at(who);
        return {"--passkey", keys.at(who), "--ssl-cert", c.cert.string(), "--ssl-key", c.key.string()};
    }

    // Rewrites the passkey file without `who` and has the tracker reload it.
    void revoke(const std::string& who) {
        keys.erase(who);
        std::string file;
        for (const auto& [b, k] : keys)
            file += k + " " + b + "\n";
        std::ofstream(passkey_file()) << file;
        ::kill(tracker().pid(), SIGHUP);
    }

    nlohmann::json tracker_stats() const {
        auto r = toast::testing::http_request(tracker_port(), "GET", "/stats");
        return nlohmann::json::parse(r.body);
    }
    // The value of one series of the tracker's /metrics, or -1.
    double tracker_metric(const std::string& series) const {
        auto text = toast::testing::http_request(tracker_port(), "GET", "/metrics").body;
        auto at = text.find("\n" + series + " ");
        if (at == std::string::npos) return -1;
        return std::stod(text.substr(at + series.size() + 2));
    }
    // Seeders + leechers of the title's swarm on the tracker.
    int tracker_peers() const {
        auto t = tracker_stats()["totals"];
        return t["seeders"].get<int>() + t["leechers"].get<int>();
    }

    toast::testing::TestCa ca;
    std::map<std::string, std::string> keys;
    std::map<std::string, toast::testing::TestCert> certs;
};

inline StatsRecord summary_of(const std::filesystem::path& stats) {
    auto lines = read_stats(stats);
    REQUIRE(!lines.empty());
    REQUIRE(lines.back().event == "summary");
    return lines.back();
}

inline void require_exit_ok(toast::testing::ChildProcess& p, std::chrono::milliseconds limit) {
    auto status = p.wait(limit);
    INFO(p.stderr_text());
    REQUIRE(status);
    REQUIRE(*status == 0);
}

inline bool eventually(const std::function<bool()>& cond, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        if (cond()) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return cond();
}

}  // namespace toast::client::testing
