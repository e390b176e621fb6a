#include "client/lt/title_playback.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>
#include <libtorrent/hasher.hpp>

#include "client/core/mp4_layout.hpp"
#include "client/core/resume_point.hpp"
#include "client/core/status_line.hpp"
#include "client/http/player_request.hpp"
#include "toast/common/durable_file.hpp"
#include "toast/common/read_file.hpp"

namespace lt = libtorrent;
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace toast::client {

ByteOffset load_resume_offset(const std::filesystem::path& save_dir, const std::string& file_name,
                              const TitleGeometry& geometry) {
    auto path = save_dir / resume_point_file_name(file_name);
    std::string text;
    try {
        text = read_file(path);
    } catch (const FileReadError& e) {
        if (!e.missing()) spdlog::warn("ignoring the saved position: {}", e.what());
        return ByteOffset(0);
    }
    std::string error;
    auto p = parse_resume_point(text, geometry.total_size(), &error);
    if (!p) {
        spdlog::warn("ignoring the saved position in {}: {}", path.string(), error);
        return ByteOffset(0);
    }
    return p->offset;
}

// The title as the player endpoint sees it. Present means had and still stored (an ejected piece is gone);
// the bytes come from the file libtorrent writes (a verified piece is in it, in the page cache).
class TitlePlayback::Media : public MediaSource {
  public:
    explicit Media(TitlePlayback& owner)
        : owner_(owner), on_disk_(owner.controller_.geometry().piece_count()), recheck_(owner.io_) {}
    ~Media() override {
        if (fd_ >= 0) ::close(fd_);
    }
    Bytes size() const override { return geometry().total_size(); }
    std::string content_type() const override { return content_type_for(owner_.file_name_); }
    Bytes available(ByteOffset offset, Bytes max) const override {
        const auto& g = geometry();
        if (offset >= g.end()) return Bytes(0);
        auto end = std::min(offset + max, g.end());
        auto at = offset;
        while (at < end) {
            auto p = g.piece_at(at);
            if (!owner_.controller_.stored().has(p) || !on_disk(p)) break;
            at = g.piece_end(p);
        }
        return std::min(at, end) - offset;
    }
    bool read(ByteOffset offset, std::span<char> out, std::string& error) override {
        const auto& path = owner_.media_path_;
        if (fd_ < 0) fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) {
            error = "cannot open " + path.string() + ": " + std::strerror(errno);
            return false;
        }
        std::size_t done = 0;
        while (done < out.size()) {
            auto n =
                ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset.value() + done));
            if (n <= 0) {
                error = "cannot read " + path.string() + ": " +
                        (n == 0 ? std::string("short file") : std::string(std::strerror(errno)));
                return false;
            }
            done += static_cast<std::size_t>(n);
        }
        return true;
    }
    void forget(PieceIndex p) { on_disk_.clear(p); }

    // libtorrent reports a piece finished once its hash passed, which can be before its bytes reach the file
    // (hashing and writing run on different threads, the bytes wait in a store buffer). A piece is served
    // only once the file holds bytes with the piece's hash; until then a re-check is scheduled.
    bool on_disk(PieceIndex p) const {
        if (on_disk_.has(p)) return true;
        auto& self = const_cast<Media&>(*this);
        std::vector<char> bytes(geometry().piece_size(p).value());
        std::string error;
        if (self.read(geometry().piece_start(p), bytes, error)) {
            lt::hasher h(bytes.data(), static_cast<int>(bytes.size()));
            if (h.final() == owner_.torrent_->hash_for_piece(lt::piece_index_t(p.value()))) {
                self.on_disk_.set(p);
                return true;
            }
        }
        spdlog::debug("piece {} is not in the file yet; checking again shortly", p.value());
        self.schedule_recheck();
        return false;
    }
    ReadKind on_player_read(ByteOffset offset, Bytes length, bool continuation) override {
        auto kind = owner_.controller_.on_player_read(offset, length, Clock::now(), continuation);
        if (kind == ReadKind::seek) {
            spdlog::info("player seek to byte {} (piece {})", offset.value(),
                         geometry().piece_at(offset).value());
        }
        // A read that waits, or a seek, needs a plan now rather than at the next tick.
        if (kind == ReadKind::seek || available(offset, Bytes(1)).value() == 0) owner_.kick_();
        return kind;
    }

  private:
    const TitleGeometry& geometry() const { return owner_.controller_.geometry(); }
    void schedule_recheck() {
        if (recheck_pending_) return;
        recheck_pending_ = true;
        recheck_.expires_after(std::chrono::milliseconds(5));
        recheck_.async_wait([this](const boost::system::error_code& ec) {
            recheck_pending_ = false;
            if (ec || owner_.stopped_) return;
            if (owner_.head_pending_) owner_.try_inspect_head();
            owner_.endpoint_->on_data_arrived();
        });
    }

    TitlePlayback& owner_;
    int fd_ = -1;
    PieceSet on_disk_;
    asio::steady_timer recheck_;
    bool recheck_pending_ = false;
};

TitlePlayback::TitlePlayback(asio::io_context& io, StreamController& controller,
                             std::shared_ptr<const lt::torrent_info> torrent, PlaybackSetup setup,
                             const ClientTuning& tuning, std::function<void()> kick)
    : io_(io),
      controller_(controller),
      torrent_(std::move(torrent)),
      setup_(std::move(setup)),
      kick_(std::move(kick)) {
    const auto& files = torrent_->files();
    if (files.num_files() != 1) {
        throw std::runtime_error("play needs a title of one file; this torrent has " +
                                 std::to_string(files.num_files()));
    }
    file_name_ = files.file_name(lt::file_index_t(0)).to_string();
    media_path_ = setup_.save_dir / files.file_path(lt::file_index_t(0));
    const auto& g = controller_.geometry();
    auto type = content_type_for(file_name_);
    if (type == "video/mp4" || type == "video/quicktime") {
        // Until the head says where the index is, the last piece is the best guess: fetch both first.
        head_pending_ = true;
        controller_.set_urgent_pieces({PieceIndex(0), g.last_piece()});
    } else {
        // Players read the last bytes of an MPEG-TS (or any container without an index) for its duration
        // before they play; those reads are not the viewer's position.
        auto tail = std::min<std::uint64_t>(g.total_size().value() / 4, tuning.tail_probe_max.value());
        controller_.set_index_range(ByteOffset(g.total_size().value() - tail), g.end());
    }
    media_ = std::make_unique<Media>(*this);
    PlayerEndpointConfig pc;
    pc.listen = setup_.listen;
    pc.file_name = file_name_;
    pc.wait_timeout = setup_.wait_timeout;
    endpoint_ = std::make_unique<PlayerEndpoint>(io_, *media_, pc);
    endpoint_->start();
    status_line_ = ::isatty(STDOUT_FILENO) == 1;
    auto resume = controller_.watcher().playhead();
    spdlog::info(
        "playing '{}' at {}{}", file_name_, endpoint_->url(),
        resume.value() > 0 ? " from the saved position, byte " + std::to_string(resume.value()) : "");
}

TitlePlayback::~TitlePlayback() {
    stopped_ = true;
    if (mpv_) mpv_->stop();
    if (endpoint_) endpoint_->stop();
}

void TitlePlayback::follow_mpv(const std::filesystem::path& socket) {
    mpv_ = std::make_unique<MpvIpc>(io_, socket, [this](const MpvEvent& e) {
        if (stopped_) return;
        auto now = Clock::now();
        switch (e.kind) {
            case MpvEventKind::position:
                controller_.on_reported_position(e.position, now);
                break;
            case MpvEventKind::pause:
            case MpvEventKind::cache_pause:
                if (auto paused = mpv_pause_.on_event(e)) controller_.on_reported_pause(*paused, now);
                break;
            case MpvEventKind::seek:
                // The reads at the new position follow; plan at once rather than at the next tick.
                kick_();
                break;
            case MpvEventKind::end_file:
                break;
        }
    });
    mpv_->start();
}

std::string TitlePlayback::url() const {
    return endpoint_->url();
}

void TitlePlayback::on_piece_had(PieceIndex p) {
    if (stopped_) return;
    if (head_pending_ && p == PieceIndex(0)) try_inspect_head();
    endpoint_->on_data_arrived();
}

void TitlePlayback::on_piece_lost(PieceIndex p) {
    media_->forget(p);
}

// The first piece is in the file: an MP4 whose index follows its media data has that tail fetched first.
void TitlePlayback::try_inspect_head() {
    const auto& g = controller_.geometry();
    if (!head_pending_ || !controller_.stored().has(PieceIndex(0)) || !media_->on_disk(PieceIndex(0))) return;
    head_pending_ = false;
    controller_.set_urgent_pieces({});
    std::vector<char> head(std::min<std::uint64_t>(g.piece_size(PieceIndex(0)).value(), 1 << 20));
    std::string error;
    if (!media_->read(ByteOffset(0), head, error)) {
        spdlog::warn("cannot read the title's first bytes to find its MP4 index: {}", error);
        return;
    }
    auto layout = inspect_mp4_head(
        std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(head.data()), head.size()),
        g.total_size());
    if (layout.placement != Mp4IndexPlacement::index_at_end) {
        spdlog::info("MP4 index placement: {}", to_string(layout.placement));
        return;
    }
    controller_.set_index_range(layout.index_begin, layout.index_end);
    auto first = g.piece_at(layout.index_begin);
    std::vector<PieceIndex> tail;
    for (auto p = first; p <= g.last_piece(); ++p)
        tail.push_back(p);
    controller_.set_urgent_pieces(std::move(tail));
    spdlog::info("MP4 index at the end (bytes {}-{}): pieces {}-{} fetched first", layout.index_begin.value(),
                 layout.index_end.value() - 1, first.value(), g.last_piece().value());
}

void TitlePlayback::save_position() {
    auto path = setup_.save_dir / resume_point_file_name(file_name_);
    try {
        write_file_atomically(path, format_resume_point({controller_.geometry().total_size(),
                                                         controller_.watcher().playhead()}));
    } catch (const std::exception& e) {
        spdlog::warn("cannot save the playback position: {}", e.what());
    }
}

void TitlePlayback::print_status(const StatsRecord& r) {
    const auto& w = controller_.watcher();
    StatusFigures f;
    f.state = w.state();
    f.position = controller_.geometry().media_time_at(w.playhead());
    f.duration = controller_.geometry().title_duration();
    f.buffer_ahead = w.buffer_ahead();
    f.bytes_from_peers = r.bytes_from_peers;
    f.bytes_from_server = r.bytes_from_server;
    f.stalls = r.stalls;
    f.stall_time =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(r.stall_seconds));
    f.peers = r.peers;
    if (r.first_byte_ms) f.first_byte = std::chrono::milliseconds(*r.first_byte_ms);
    std::fputs(refresh_in_place(format_status_line(f)).c_str(), stdout);
    std::fflush(stdout);
}

void TitlePlayback::on_stats(const StatsRecord& record) {
    save_position();
    if (status_line_) print_status(record);
}

void TitlePlayback::fill_record(StatsRecord& r) const {
    r.player_url = endpoint_->url();
    const auto& es = endpoint_->stats();
    if (es.first_byte) r.first_byte_ms = es.first_byte->count();
    r.seek_ms.clear();
    for (auto d : es.seek_latencies)
        r.seek_ms.push_back(d.count());
}

void TitlePlayback::stop(const StatsRecord& summary) {
    if (stopped_) return;
    save_position();
    if (status_line_) {
        print_status(summary);
        std::fputs("\n", stdout);
    }
    stopped_ = true;
    if (mpv_) mpv_->stop();
    endpoint_->stop();
}

}  // namespace toast::client
