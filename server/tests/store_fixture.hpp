// Shared by the block-store tests: a store of N temporary disks, ingest through the library, and synchronous
// reads through the TitleStore interface that turn the returned segments back into bytes.
#pragma once

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "server/core/server_config.hpp"
#include "server/core/title_store.hpp"
#include "server/io/ingest.hpp"
#include "server/io/open_file.hpp"
#include "test_support.hpp"
#include "toast/common/metrics.hpp"

namespace toast::server::testing {

class StoreFixture {
  public:
    // `extra` is merged into the config JSON (e.g. per-disk objects replace the plain directories).
    explicit StoreFixture(std::size_t disks, const std::string& policy = "rda", nlohmann::json extra = {}) {
        nlohmann::json j = {
            {"listen", "127.0.0.1:1"}, {"policy", policy}, {"public_url", "http://vod.test:8080"}};
        nlohmann::json list = nlohmann::json::array();
        for (std::size_t d = 0; d < disks; ++d) {
            auto path = dir_ / ("disk" + std::to_string(d));
            std::filesystem::create_directories(path);
            list.push_back(path.string());
        }
        j["disks"] = list;
        for (auto& [k, v] : extra.items())
            j[k] = v;
        // In `extra`, a null disk is this fixture's plain directory and a disk object without a path gets it.
        for (std::size_t d = 0; d < j["disks"].size() && d < disks; ++d) {
            if (j["disks"][d].is_null()) j["disks"][d] = list[d];
            if (j["disks"][d].is_object() && !j["disks"][d].contains("path")) j["disks"][d]["path"] = list[d];
        }
        json_ = j;
        config = load_server_config(j);
    }

    std::filesystem::path path(const std::string& name) const { return dir_ / name; }
    std::filesystem::path disk(std::size_t d) const { return config.disks.at(d).path; }
    const nlohmann::json& json() const { return json_; }
    std::filesystem::path write_config() const {
        auto p = dir_ / "server.json";
        std::ofstream(p) << json_.dump();
        return p;
    }

    std::filesystem::path media(const std::string& name, std::uint64_t size, std::uint64_t seed) {
        auto p = dir_ / name;
        toast::testing::write_random_file(p, size, seed);
        return p;
    }

    IngestResult ingest(const std::string& name, const std::filesystem::path& media, std::uint64_t block_size,
                        std::optional<PlacementPolicy> policy = std::nullopt) {
        IngestOptions o;
        o.name = name;
        o.media = media;
        o.torrent = dir_ / (name + ".torrent");
        o.policy = policy;
        o.block_size = Bytes(block_size);
        o.bitrate = BitRate(6'000'000);
        return ingest_title(config, o);
    }

    ServerConfig config;

  private:
    toast::testing::TempDir dir_;
    nlohmann::json json_;
};

// Reads through the interface and waits (bounded) for the handler.
inline ReadResult read_now(TitleStore& store, const std::shared_ptr<const TitleInfo>& title,
                           std::uint64_t offset, std::uint64_t length) {
    auto promise = std::make_shared<std::promise<ReadResult>>();
    auto future = promise->get_future();
    store.read(ReadRequest{.title = title, .offset = offset, .length = length},
               [promise](ReadResult r) { promise->set_value(std::move(r)); });
    REQUIRE(future.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
    return future.get();
}

// The bytes the segments describe, read back with pread from the store's open files (what sendfile would
// send).
inline std::string segment_bytes(const ReadResult& r) {
    std::string out;
    for (const auto& seg : r.segments) {
        if (const auto* f = std::get_if<FileSegment>(&seg)) {
            std::string buf(f->length, '\0');
            std::size_t done = 0;
            while (done < f->length) {
                auto n = ::pread(f->file->fd(), buf.data() + done, f->length - done,
                                 static_cast<off_t>(f->offset + done));
                REQUIRE(n > 0);
                done += static_cast<std::size_t>(n);
            }
            out += buf;
        } else {
            const auto& m = std::get<MemorySegment>(seg);
            out.append(*m.data, m.offset, m.length);
        }
    }
    return out;
}

inline std::string read_bytes(TitleStore& store, const std::shared_ptr<const TitleInfo>& title,
                              std::uint64_t offset, std::uint64_t length) {
    auto r = read_now(store, title, offset, length);
    INFO(r.message);
    REQUIRE(r.status == ReadStatus::ok);
    return segment_bytes(r);
}

// Flips one byte of a file in place (keeps its size).
inline void flip_byte(const std::filesystem::path& p, std::uint64_t offset) {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    REQUIRE(f);
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ 0x5a));
}

// The block size most store tests ingest with.
constexpr std::uint64_t kBlock = 256 * 1024;

inline std::uint64_t counter_value(MetricsRegistry& m, const std::string& name, const Labels& labels = {}) {
    return m.counter(name, "", labels).value();
}

inline Labels disk_label(std::uint32_t d) {
    return {{"disk", std::to_string(d)}};
}

}  // namespace toast::server::testing
