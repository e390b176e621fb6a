#include "client/core/stream_watcher.hpp"

#include <algorithm>

namespace toast::client {

using std::chrono::nanoseconds;

std::string_view to_string(PlaybackState s) {
    switch (s) {
        case PlaybackState::starting:
            return "starting";
        case PlaybackState::playing:
            return "playing";
        case PlaybackState::stalled:
            return "stalled";
        case PlaybackState::seeking:
            return "seeking";
        case PlaybackState::paused:
            return "paused";
        case PlaybackState::finished:
            return "finished";
    }
    return "unknown";
}

StreamWatcher::StreamWatcher(TitleGeometry geometry, StreamWatcherConfig config, SteadyTime start,
                             PieceSet had)
    : geometry_(geometry),
      config_(config),
      had_(had.size() == geometry.piece_count() ? std::move(had) : PieceSet(geometry.piece_count())),
      start_(start),
      last_(start),
      media_pos_(geometry.media_time_at(std::min(config.start_offset, geometry.end()))),
      frontier_(std::min(config.start_offset, geometry.end())),
      last_read_(start) {
    if (media_pos_ >= geometry_.title_duration()) {
        state_ = PlaybackState::finished;
        return;
    }
    try_start(start);
}

ByteOffset StreamWatcher::playhead() const {
    return geometry_.offset_at(media_pos_);
}

nanoseconds StreamWatcher::into_playhead_piece() const {
    auto start = geometry_.media_time_at(geometry_.piece_start(playhead_piece()));
    return media_pos_ > start ? media_pos_ - start : nanoseconds(0);
}

nanoseconds StreamWatcher::time_until_needed(PieceIndex p) const {
    if (p <= playhead_piece()) return nanoseconds(0);
    auto at = geometry_.media_time_at(geometry_.piece_start(p));
    return at > media_pos_ ? at - media_pos_ : nanoseconds(0);
}

nanoseconds StreamWatcher::buffer_ahead() const {
    auto p = playhead_piece();
    if (!had_.has(p)) return nanoseconds(0);
    while (p < geometry_.last_piece() && had_.has(p.next()))
        ++p;
    auto end = geometry_.media_time_at(geometry_.piece_end(p));
    return end > media_pos_ ? end - media_pos_ : nanoseconds(0);
}

StallStats StreamWatcher::stalls(SteadyTime now) const {
    StallStats s = stalls_;
    if (state_ == PlaybackState::stalled && now > stall_start_) {
        auto ongoing = now - stall_start_;
        s.total += ongoing;
        s.longest = std::max(s.longest, nanoseconds(ongoing));
    }
    return s;
}

std::vector<PieceIndex> StreamWatcher::blocked_reads() const {
    std::vector<PieceIndex> out;
    for (const auto& b : blocked_)
        out.push_back(b.piece);
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<PieceIndex> StreamWatcher::urgent_reads(PeerHeld peers) const {
    std::vector<PieceIndex> out;
    const bool waiting = state_ == PlaybackState::starting || state_ == PlaybackState::stalled ||
                         state_ == PlaybackState::seeking;
    for (const auto& b : blocked_) {
        const auto waited = nanoseconds(last_ - b.since);
        auto until = time_until_needed(b.piece);
        if (waiting) until = until > waited ? until - waited : nanoseconds(0);
        const bool peers_hold = peers.pieces && peers.pieces->has(b.piece);
        if (b.index || until <= (peers_hold ? peers.lead : config_.urgent_lead) ||
            waited >= config_.read_patience)
            out.push_back(b.piece);
    }
    std::sort(out.begin(), out.end());
    return out;
}

nanoseconds StreamWatcher::cap() const {
    if (reported_) return *reported_ + config_.report_slack;
    if (config_.mode == WatcherMode::player) return geometry_.media_time_at(frontier_);
    return nanoseconds::max();
}

void StreamWatcher::advance_to(SteadyTime now) {
    if (now < last_) now = last_;
    if (state_ != PlaybackState::playing) {
        last_ = now;
        return;
    }
    const SteadyTime until = now;
    SteadyTime t = last_;
    const auto title_end = geometry_.title_duration();
    while (t < until && state_ == PlaybackState::playing) {
        auto piece = playhead_piece();
        bool last_piece = piece == geometry_.last_piece();
        auto boundary = last_piece ? title_end : geometry_.media_time_at(geometry_.piece_start(piece.next()));
        auto limit = std::min(boundary, cap());
        if (media_pos_ >= limit) {
            // Waiting at the read frontier: the player has not asked for more.
            if (!at_frontier_since_) at_frontier_since_ = t;
            break;
        }
        auto need = limit - media_pos_;
        auto avail = nanoseconds(until - t);
        if (need > avail) {
            media_pos_ += avail;
            playing_time_ += avail;
            t = until;
            break;
        }
        media_pos_ = limit;
        playing_time_ += need;
        t += need;
        if (limit != boundary) {
            at_frontier_since_ = t;
            break;
        }
        if (last_piece) {
            state_ = PlaybackState::finished;
        } else if (!had_.has(piece.next())) {
            begin_stall(t);
        }
    }
    // At the frontier with no read for pause_after (counted from the later of the last read and reaching
    // the frontier): the player is not asking for more, so it is not playing.
    if (config_.mode == WatcherMode::player && !reported_ && state_ == PlaybackState::playing &&
        at_frontier_since_ && now - std::max(last_read_, *at_frontier_since_) > config_.pause_after) {
        state_ = PlaybackState::paused;
    }
    last_ = now;
}

void StreamWatcher::try_start(SteadyTime now) {
    if (state_ != PlaybackState::starting) return;
    if (config_.mode == WatcherMode::player && !seen_read_) return;
    auto from = playhead();
    auto need = std::max(bytes_in(geometry_.bitrate(), config_.startup_buffer), config_.startup_bytes);
    if (need.value() == 0) need = Bytes(1);
    auto to = std::min(from + need, geometry_.end());
    for (auto p = geometry_.piece_at(from); p <= geometry_.piece_at(ByteOffset(to.value() - 1)); ++p)
        if (!had_.has(p)) return;
    state_ = PlaybackState::playing;
    startup_delay_ = now - start_;
    last_ = now;
}

void StreamWatcher::begin_stall(SteadyTime at) {
    state_ = PlaybackState::stalled;
    stall_start_ = at;
    ++stalls_.count;
}

void StreamWatcher::end_stall(SteadyTime at) {
    auto d = at > stall_start_ ? nanoseconds(at - stall_start_) : nanoseconds(0);
    stalls_.total += d;
    stalls_.longest = std::max(stalls_.longest, d);
    if (ended_stalls_.size() < kMaxStallRecords) ended_stalls_.push_back(d);
    state_ = PlaybackState::playing;
    last_ = at;
}

void StreamWatcher::on_piece_had(PieceIndex p, SteadyTime now) {
    advance_to(now);
    if (!had_.set(p)) return;
    std::erase_if(blocked_, [&](const BlockedRead& b) { return b.piece == p; });
    switch (state_) {
        case PlaybackState::starting:
            try_start(last_);
            break;
        case PlaybackState::stalled:
            if (p == playhead_piece()) end_stall(last_);
            break;
        case PlaybackState::seeking:
            if (p == playhead_piece()) {
                seek_latencies_.push_back(last_ - seek_start_);
                state_ = PlaybackState::playing;
            }
            break;
        default:
            break;
    }
}

void StreamWatcher::on_piece_lost(PieceIndex p, SteadyTime now) {
    advance_to(now);
    had_.clear(p);
}

void StreamWatcher::tick(SteadyTime now) {
    advance_to(now);
    if (state_ == PlaybackState::starting) try_start(last_);
}

void StreamWatcher::pause(SteadyTime now) {
    advance_to(now);
    if (state_ == PlaybackState::stalled) end_stall(last_);
    if (state_ == PlaybackState::playing) state_ = PlaybackState::paused;
}

void StreamWatcher::resume(SteadyTime now) {
    advance_to(now);
    if (state_ != PlaybackState::paused) return;
    last_read_ = last_;
    state_ = PlaybackState::playing;
    if (!had_.has(playhead_piece())) begin_stall(last_);
}

void StreamWatcher::jump_to(ByteOffset offset, SteadyTime now) {
    if (state_ == PlaybackState::stalled) end_stall(now);
    ++seeks_;
    offset = std::min(offset, geometry_.end());
    media_pos_ = geometry_.media_time_at(offset);
    frontier_ = offset;
    at_frontier_since_.reset();
    if (offset >= geometry_.end()) {
        state_ = PlaybackState::finished;
        return;
    }
    if (state_ == PlaybackState::starting) {
        try_start(now);
        return;
    }
    last_ = now;
    if (had_.has(playhead_piece())) {
        seek_latencies_.push_back(nanoseconds(0));
        state_ = PlaybackState::playing;
    } else {
        seek_start_ = now;
        state_ = PlaybackState::seeking;
    }
}

void StreamWatcher::seek(ByteOffset offset, SteadyTime now) {
    advance_to(now);
    jump_to(offset, last_);
}

ReadKind StreamWatcher::on_player_read(ByteOffset offset, Bytes length, SteadyTime now, bool continuation) {
    if (config_.mode != WatcherMode::player) return ReadKind::ignored;
    advance_to(now);
    last_read_ = last_;
    offset = std::min(offset, geometry_.end());
    auto end = std::min(offset + length, geometry_.end());
    const bool in_index = offset >= index_begin_ && end <= index_end_ && offset < end;
    if (offset < end) {
        // Only the first missing piece waits: a read of "bytes=0-" must not make the whole title urgent.
        for (auto p = geometry_.piece_at(offset); p <= geometry_.piece_at(ByteOffset(end.value() - 1)); ++p) {
            if (!had_.has(p)) {
                auto known = std::find_if(blocked_.begin(), blocked_.end(),
                                          [&](const BlockedRead& b) { return b.piece == p; });
                if (known == blocked_.end()) {
                    blocked_.push_back({p, last_, in_index});
                } else {
                    known->index = known->index || in_index;
                }
                break;
            }
        }
    }
    if (in_index) return ReadKind::index;
    if (reported_) {
        // The player says where it is: a read is only what it holds.
        frontier_ = std::max(frontier_, end);
        return ReadKind::sequential;
    }
    if (!seen_read_) {
        seen_read_ = true;
        media_pos_ = geometry_.media_time_at(offset);
        frontier_ = end;
        at_frontier_since_.reset();
        if (state_ == PlaybackState::finished && offset < geometry_.end()) state_ = PlaybackState::starting;
        try_start(last_);
        return ReadKind::first;
    }
    auto distance = offset > playhead() ? offset - playhead() : playhead() - offset;
    bool near = continuation || distance <= config_.seek_threshold;
    if (near) {
        if (end > frontier_) {
            frontier_ = end;
            at_frontier_since_.reset();
        }
        if (state_ == PlaybackState::paused) resume(last_);
        return ReadKind::sequential;
    }
    if (state_ == PlaybackState::paused) state_ = PlaybackState::playing;
    // The reads before the target are abandoned: their pieces are no longer urgent.
    auto target = geometry_.piece_at(offset);
    std::erase_if(blocked_, [&](const BlockedRead& b) { return b.piece < target; });
    jump_to(offset, last_);
    frontier_ = end;
    return ReadKind::seek;
}

void StreamWatcher::on_reported_position(nanoseconds media_time, SteadyTime now) {
    if (config_.mode != WatcherMode::player) return;
    advance_to(now);
    media_time = std::clamp(media_time, nanoseconds(0), geometry_.title_duration());
    const bool first = !reported_;
    reported_ = media_time;
    seen_read_ = true;
    auto offset = geometry_.offset_at(media_time);
    if (state_ == PlaybackState::starting) {
        media_pos_ = media_time;
        try_start(last_);
        return;
    }
    auto here = playhead();
    auto distance = offset > here ? offset - here : here - offset;
    if (!first && distance > config_.seek_threshold) {
        auto target = geometry_.piece_at(offset);
        std::erase_if(blocked_, [&](const BlockedRead& b) { return b.piece < target; });
        jump_to(offset, last_);
        return;
    }
    if (state_ == PlaybackState::finished && media_time < geometry_.title_duration())
        state_ = PlaybackState::playing;
    // A small correction either way: the player is the authority. A stall at the playhead piece stays one.
    media_pos_ = media_time;
    if (media_pos_ >= geometry_.title_duration()) {
        if (state_ == PlaybackState::stalled) end_stall(last_);
        state_ = PlaybackState::finished;
    } else if (state_ == PlaybackState::playing && !had_.has(playhead_piece())) {
        begin_stall(last_);
    } else if (state_ == PlaybackState::stalled && had_.has(playhead_piece())) {
        end_stall(last_);
    }
}

void StreamWatcher::on_reported_pause(bool paused, SteadyTime now) {
    if (config_.mode != WatcherMode::player) return;
    if (paused) {
        pause(now);
    } else {
        resume(now);
    }
}

void StreamWatcher::set_index_range(ByteOffset begin, ByteOffset end) {
    index_begin_ = std::min(begin, geometry_.end());
    index_end_ = std::max(index_begin_, std::min(end, geometry_.end()));
}

}  // namespace toast::client
