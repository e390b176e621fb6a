#include "client/service/service_title.hpp"

#include <sys/stat.h>

#include <algorithm>

#include <spdlog/spdlog.h>
#include <libtorrent/torrent_status.hpp>

#include "client/lt/title_playback.hpp"
#include "client/service/piece_map.hpp"

namespace lt = libtorrent;
using Clock = std::chrono::steady_clock;
using json = nlohmann::ordered_json;

namespace toast::client {

namespace {

std::int64_t ms(std::chrono::nanoseconds d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

std::string title_id(const lt::sha1_hash& h) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (auto byte : h) {
        auto b = static_cast<unsigned char>(byte);
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}

void TitleSeedEvents::on_event(const LtEvent& e) {
    if (listener) listener(e);
    if (e.kind != LtEventKind::torrent_error) return;
    spdlog::warn("title {}: torrent error while seeding: {}", t_.saved.id, e.message);
    t_.error = e.message;
}

ServiceTitle::ServiceTitle(SavedTitle saved_, TitleTorrent torrent_, TitleGeometry geometry_,
                           std::filesystem::path dir_)
    : saved(std::move(saved_)),
      torrent(std::move(torrent_)),
      geometry(geometry_),
      file_name(torrent.params.ti->files().file_name(lt::file_index_t(0)).to_string()),
      dir(std::move(dir_)) {}

Bytes disk_bytes(ServiceTitle& t) {
    if (t.stream) return t.stream->controller().stored_bytes();
    if (!t.seed.is_valid()) return Bytes(0);
    const auto done = static_cast<std::uint64_t>(std::max<std::int64_t>(0, t.seed.status().total_done));
    // libtorrent reports nothing done while it checks a title it was just given (after a stop, at start),
    // though the bytes are on disk: a play in that moment would fit under the quota by counting them as free.
    // What the file occupies is the truth a disk quota is about.
    struct stat st {};
    const auto file = t.dir / t.torrent.params.ti->files().file_path(lt::file_index_t(0));
    std::uint64_t allocated = 0;
    if (::stat(file.c_str(), &st) == 0) allocated = static_cast<std::uint64_t>(st.st_blocks) * 512;
    return Bytes(std::max(done, std::min(allocated, t.geometry.total_size().value())));
}

json title_status_json(ServiceTitle& t) {
    const auto& g = t.geometry;
    json j;
    j["id"] = t.saved.id;
    j["name"] = t.saved.name;
    j["file"] = t.file_name;
    j["state"] = std::string(to_string(t.state));
    j["size"] = g.total_size().value();
    j["piece_size"] = g.piece_length().value();
    j["pieces"] = g.piece_count().value();
    j["bitrate_bps"] = g.bitrate().value();
    j["duration_ms"] = ms(g.title_duration());
    auto from_peers = t.from_peers, from_server = t.from_server, uploaded = t.uploaded;
    std::uint32_t stalls = t.stalls;
    lt::torrent_status st;
    if (t.stream) {
        st = t.stream->handle().status();
        const auto& c = t.stream->controller();
        const auto& w = c.watcher();
        StatsRecord r;
        c.fill_record(r, Clock::now());
        from_server += r.bytes_server_useful + r.bytes_server_wasted;
        stalls += r.stalls;
        j["playback"] = std::string(to_string(w.state()));
        j["position_ms"] = ms(g.media_time_at(w.playhead()));
        j["buffer_ahead_ms"] = ms(w.buffer_ahead());
        j["pieces_had"] = c.had().count().value();
        j["player_url"] = t.stream->player_url();
    } else {
        if (t.seed.is_valid()) st = t.seed.status();
        j["playback"] = nullptr;
        j["position_ms"] = ms(g.media_time_at(load_resume_offset(t.dir, t.file_name, g)));
        j["buffer_ahead_ms"] = 0;
        j["pieces_had"] = st.num_pieces;
        j["player_url"] = nullptr;
    }
    from_peers += static_cast<std::uint64_t>(st.total_payload_download);
    uploaded += static_cast<std::uint64_t>(st.total_payload_upload);
    j["checking"] = st.state == lt::torrent_status::checking_files ||
                    st.state == lt::torrent_status::checking_resume_data;
    j["bytes_on_disk"] = disk_bytes(t).value();
    j["bytes_from_peers"] = from_peers;
    j["bytes_from_server"] = from_server;
    j["bytes_uploaded"] = uploaded;
    j["stalls"] = stalls;
    j["peers"] = st.num_peers;
    j["download_rate"] = st.download_payload_rate;
    j["upload_rate"] = st.upload_payload_rate;
    j["added"] = t.saved.added;
    j["last_watched"] = t.saved.last_watched;
    j["error"] = t.error.empty() ? json(nullptr) : json(t.error);
    j["pushed"] = t.saved.pushed;
    j["push_bytes"] = t.push_bytes;
    j["map"] = piece_map_json(t.geometry, t.stream.get(), t.seed);
    return j;
}

}  // namespace toast::client
