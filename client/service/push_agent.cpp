#include "client/service/push_agent.hpp"

#include <spdlog/spdlog.h>
#include <libtorrent/torrent_status.hpp>

#include "client/core/service_api.hpp"
#include "client/lt/torrent_file.hpp"
#include "client/service/service_title.hpp"
#include "toast/common/durable_file.hpp"
#include "toast/common/read_file.hpp"

namespace asio = boost::asio;
namespace lt = libtorrent;
using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

namespace toast::client {

namespace {

constexpr const char* kSavedFile = "push.json";
constexpr auto kTick = std::chrono::milliseconds(250);
constexpr auto kRetry = std::chrono::seconds(30);         // a poll without a usable answer is tried again
constexpr auto kWriteTimeout = std::chrono::seconds(30);  // an add_piece never confirmed is fetched again
constexpr std::size_t kMaxAnswer = 4 * 1024 * 1024;
constexpr auto kHttpTimeout = std::chrono::seconds(15);

std::int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

TorrentFacts facts_of(const ServiceTitle& t) {
    return TorrentFacts{.name = t.saved.name,
                        .info_hash = t.saved.id,
                        .size = t.geometry.total_size(),
                        .piece_size = t.geometry.piece_length(),
                        .pieces = t.geometry.piece_count().value()};
}

json ranges_json(const std::vector<PieceRange>& ranges) {
    auto a = json::array();
    for (const auto& r : ranges)
        a.push_back({r.first.value(), r.last.value()});
    return a;
}

}  // namespace

// An answer being checked: the torrents of the titles the box lacks arrive one by one.
struct PushAgent::Pending {
    PushAssignment assignment;
    std::string text;
    std::map<std::string, std::string> torrents;  // id -> bytes, for titles the box lacks
    std::size_t waiting = 0;
    bool failed = false;
};

PushAgent::PushAgent(asio::io_context& io, PushHost& host, PushAgentConfig config)
    : io_(io),
      host_(host),
      config_(std::move(config)),
      policy_({config_.rate.value_or(BitRate(0)), config_.quota, 2}),
      poll_timer_(io),
      tick_timer_(io) {}

PushAgent::~PushAgent() {
    stop();
}

void PushAgent::start() {
    load_saved();
    poll();
    tick();
}

void PushAgent::stop() {
    if (stopped_) return;
    stopped_ = true;
    poll_timer_.cancel();
    tick_timer_.cancel();
    cancel_all();
    pending_.reset();
}

void PushAgent::load_saved() {
    const auto path = config_.save_dir / kSavedFile;
    std::string text;
    try {
        text = read_file(path);
    } catch (const FileReadError& e) {
        if (!e.missing()) spdlog::error("push: cannot read {}: {}", path.string(), e.what());
        return;
    }
    std::string error;
    auto a = parse_push_assignment(text, &error);
    if (a) error = check_assignment(*a, config_.box_id, config_.quota);
    if (a && error.empty()) {
        for (const auto& t : a->titles) {
            if (auto* have = host_.title(t.info_hash); have && error.empty())
                error = check_title(t, facts_of(*have));
        }
    }
    if (!error.empty()) {
        spdlog::error("push: the saved assignment {} is not used: {}", path.string(), error);
        return;
    }
    assignment_ = std::move(*a);
    spdlog::info("push: resuming assignment {} ({} titles, {})", assignment_->plan,
                 assignment_->titles.size(), format_bytes(assignment_->bytes()));
}

void PushAgent::schedule_poll(std::chrono::seconds after) {
    if (stopped_) return;
    poll_timer_.expires_after(after);
    poll_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec && !stopped_) poll();
    });
}

void PushAgent::poll() {
    ++polls_;
    auto url = config_.server + "/push/assignment?box=" + config_.box_id +
               "&quota=" + std::to_string(config_.quota.value());
    if (config_.upload) url += "&upload_bps=" + std::to_string(config_.upload->value());
    http_call(io_, "GET", url, kMaxAnswer, kHttpTimeout, config_.access, [this](HttpCallResult r) {
        if (!stopped_) on_answer(std::move(r));
    });
}

void PushAgent::on_answer(HttpCallResult r) {
    const auto refresh = assignment_ ? assignment_->refresh : std::chrono::seconds(60);
    if (r.status != 200) {
        poll_error_ = r.status == 0 ? r.error
                                    : "the server answered " + std::to_string(r.status) + " " + r.reason +
                                          ": " + r.body.substr(0, 200);
        spdlog::warn("push: no assignment from {}: {}", config_.server, poll_error_);
        schedule_poll(std::min(refresh, std::chrono::seconds(kRetry)));
        return;
    }
    poll_error_.clear();
    std::string error;
    auto a = parse_push_assignment(r.body, &error);
    if (a) error = check_assignment(*a, config_.box_id, config_.quota);
    if (!error.empty()) {
        schedule_poll(a ? a->refresh : refresh);
        return refuse(error);
    }
    schedule_poll(a->refresh);
    auto p = std::make_shared<Pending>();
    p->assignment = std::move(*a);
    p->text = std::move(r.body);
    pending_ = p;
    for (const auto& t : p->assignment.titles) {
        if (auto* have = host_.title(t.info_hash)) {
            if (auto e = check_title(t, facts_of(*have)); !e.empty()) return refuse(e);
            continue;
        }
        ++p->waiting;
        http_call(io_, "GET", config_.server + t.torrent, kMaxTorrentBytes, kHttpTimeout, config_.access,
                  [this, p, t](HttpCallResult d) {
                      if (stopped_ || pending_ != p || p->failed) return;
                      if (d.status != 200) {
                          p->failed = true;
                          return refuse("title '" + t.name + "' is unknown to the server: " +
                                        (d.status == 0 ? d.error
                                                       : "its torrent " + t.torrent + " answered " +
                                                             std::to_string(d.status) + " " + d.reason));
                      }
                      check_torrent(p, t, d.body);
                  });
    }
    finish(p);
}

void PushAgent::check_torrent(const std::shared_ptr<Pending>& p, const AssignedTitle& t,
                              const std::string& bytes) {
    try {
        auto torrent =
            parse_title_torrent(std::vector<char>(bytes.begin(), bytes.end()), config_.server + t.torrent);
        const auto& ti = *torrent.params.ti;
        TorrentFacts f{torrent.title, title_id(ti.info_hashes().get_best()),
                       Bytes(static_cast<std::uint64_t>(ti.total_size())),
                       Bytes(static_cast<std::uint64_t>(ti.piece_length())), ti.num_pieces()};
        if (auto e = check_title(t, f); !e.empty()) {
            p->failed = true;
            return refuse(e);
        }
    } catch (const std::exception& e) {
        p->failed = true;
        return refuse("title '" + t.name + "': " + e.what());
    }
    p->torrents[t.info_hash] = bytes;
    --p->waiting;
    finish(p);
}

void PushAgent::finish(const std::shared_ptr<Pending>& p) {
    if (p->failed || p->waiting > 0 || pending_ != p) return;
    pending_.reset();
    commit(p);
}

void PushAgent::refuse(const std::string& why) {
    pending_.reset();
    ++refused_;
    error_ = why;
    spdlog::error("push: assignment from {} refused, nothing changed: {}", config_.server, why);
}

void PushAgent::commit(const std::shared_ptr<Pending>& p) {
    auto& a = p->assignment;
    const bool same = assignment_ && assignment_->plan == a.plan;
    for (const auto& t : a.titles) {
        auto* have = host_.title(t.info_hash);
        const auto* before = assignment_ ? assignment_->find(t.info_hash) : nullptr;
        if (have && have->saved.pushed && before && !ranges_cover(t.ranges, before->ranges)) {
            // A pushed title holds only what it was assigned; pieces it may no longer keep cannot be dropped
            // one by one, so it starts over with its new ranges.
            spdlog::info("push: title {} ('{}') has new ranges: fetched again", t.info_hash, t.name);
            p->torrents[t.info_hash] = read_file(have->dir / kTitleTorrentFile);
            host_.remove(t.info_hash);
            have = nullptr;
        }
        if (have) continue;
        std::string error;
        if (!host_.add_pushed(p->torrents.at(t.info_hash), config_.server + t.torrent, &error))
            spdlog::error("push: cannot add title {} ('{}'): {}", t.info_hash, t.name, error);
    }
    for (auto* t : host_.pushed_titles()) {
        if (!a.find(t->saved.id)) {
            spdlog::info("push: title {} ('{}') is no longer assigned", t->saved.id, t->saved.name);
            host_.remove(t->saved.id);
        }
    }
    try {
        write_file_atomically(config_.save_dir / kSavedFile, p->text);
    } catch (const std::exception& e) {
        spdlog::error("push: cannot save the assignment: {}", e.what());
    }
    if (!same) {
        spdlog::info("push: assignment {} accepted: {} titles, {}, window {} to {} (unix ms), {}", a.plan,
                     a.titles.size(), format_bytes(a.bytes()), a.window_start_ms, a.window_end_ms,
                     format_bitrate(a.rate));
    }
    error_.clear();
    assignment_ = std::move(a);
}

HttpFetcher& PushAgent::fetcher(ServiceTitle& t) {
    auto& f = fetchers_[t.saved.id];
    if (!f) {
        std::vector<ServerUrl> urls;
        for (const auto& u : title_urls(t.torrent.url_list, {config_.server}, t.file_name)) {
            if (auto parsed = parse_http_url(u)) urls.push_back(*parsed);
        }
        const auto id = t.saved.id;
        f = std::make_unique<HttpFetcher>(io_, std::move(urls), FetcherConfig{.access = config_.access},
                                          [this, id](const PieceRequest& r, std::vector<char> data,
                                                     std::size_t) { on_piece(id, r, std::move(data)); });
    }
    return *f;
}

void PushAgent::cancel_all() {
    for (auto& [id, f] : fetchers_)
        f->stop();
    fetchers_.clear();
    in_flight_.clear();
}

void PushAgent::on_play_started() {
    if (!in_flight_.empty()) spdlog::info("push: a title plays: {} fetches stopped", in_flight_.size());
    cancel_all();
    state_ = PushState::paused_playing;
}

void PushAgent::on_title_removed(const std::string& id) {
    if (auto it = fetchers_.find(id); it != fetchers_.end()) {
        it->second->stop();
        fetchers_.erase(it);
    }
    std::erase_if(in_flight_, [&](const auto& e) { return e.first.first == id; });
    std::erase_if(writing_, [&](const auto& e) { return e.first.first == id; });
}

void PushAgent::on_piece(const std::string& id, const PieceRequest& r, std::vector<char> data) {
    const Key key{id, r.piece.value()};
    if (in_flight_.erase(key) == 0) return;  // cancelled meanwhile
    auto* t = host_.title(id);
    if (!t || !t->saved.pushed || t->stream || !t->seed.is_valid() || host_.playing()) return;
    const auto st = t->seed.status({});
    if (st.state == lt::torrent_status::checking_files ||
        st.state == lt::torrent_status::checking_resume_data)
        return;  // add_piece would drop it: fetched again later
    writing_[key] = {Bytes(data.size()), Clock::now()};
    t->seed.add_piece(lt::piece_index_t(r.piece.value()), std::move(data));
}

void PushAgent::on_seed_event(const std::string& id, const LtEvent& e) {
    if (e.kind != LtEventKind::piece_finished && e.kind != LtEventKind::hash_failed) return;
    auto it = writing_.find({id, e.piece.value()});
    if (it == writing_.end()) return;
    if (e.kind == LtEventKind::piece_finished) {
        push_bytes_ += it->second.first.value();
        if (auto* t = host_.title(id)) t->push_bytes += it->second.first.value();
    } else {
        spdlog::warn("push: title {} piece {} from the server failed its hash check", id, e.piece.value());
    }
    writing_.erase(it);
}

Bytes PushAgent::held() {
    Bytes total{0};
    for (auto* t : host_.pushed_titles())
        total += disk_bytes(*t);
    return total;
}

void PushAgent::tick() {
    if (stopped_) return;
    const auto now = Clock::now();
    std::erase_if(writing_, [&](const auto& e) { return now - e.second.second > kWriteTimeout; });
    PushFetchInput in;
    in.assigned = assignment_.has_value();
    in.playing = host_.playing();
    in.unix_ms = unix_ms();
    if (assignment_) {
        in.window_start_ms = assignment_->window_start_ms;
        in.window_end_ms = assignment_->window_end_ms;
        auto rate = assignment_->rate;
        if (config_.rate && *config_.rate < rate) rate = *config_.rate;
        policy_.set_settings({rate, config_.quota, 2});
    }
    const bool open =
        in.assigned && !in.playing && in.unix_ms >= in.window_start_ms && in.unix_ms < in.window_end_ms;
    std::vector<ServiceTitle*> titles;
    if (open) {
        for (const auto& a : assignment_->titles) {
            auto* t = host_.title(a.info_hash);
            titles.push_back(t);
            if (!t || !t->saved.pushed || t->stream || !t->seed.is_valid()) continue;
            const auto st = t->seed.status(lt::torrent_handle::query_pieces);
            if (st.state == lt::torrent_status::checking_files ||
                st.state == lt::torrent_status::checking_resume_data)
                continue;
            for (const auto& r : a.ranges) {
                for (auto p = r.first; p <= r.last; ++p) {
                    const Key key{a.info_hash, p.value()};
                    if (st.pieces.size() > p.value() && st.pieces[lt::piece_index_t(p.value())]) continue;
                    if (in_flight_.count(key) || writing_.count(key)) continue;
                    in.missing.push_back({titles.size() - 1, p, t->geometry.piece_size(p)});
                }
            }
        }
        in.held = held();
    }
    in.in_flight = in_flight_.size();
    for (const auto& [key, size] : in_flight_)
        in.in_flight_bytes += size;
    auto d = policy_.decide(in, now);
    state_ = d.state;
    if (d.cancel) cancel_all();
    for (const auto& p : d.start) {
        auto* t = titles[p.title];
        const auto& g = t->geometry;
        PieceRequest r{p.piece, g.piece_start(p.piece).value(), static_cast<std::uint32_t>(p.size.value()),
                       false, std::nullopt};
        if (fetcher(*t).fetch(r)) in_flight_[{t->saved.id, p.piece.value()}] = p.size;
    }
    tick_timer_.expires_after(kTick);
    tick_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (!ec) tick();
    });
}

json PushAgent::status_json() {
    json j;
    j["state"] = std::string(to_string(state_));
    j["box_id"] = config_.box_id;
    j["server"] = config_.server;
    j["quota"] = config_.quota.value();
    j["held"] = held().value();
    j["rate_bps"] = policy_.settings().rate.value();
    j["push_bytes"] = push_bytes_;
    j["in_flight"] = in_flight_.size();
    j["polls"] = polls_;
    j["refused"] = refused_;
    j["error"] = error_.empty() ? json(nullptr) : json(error_);
    j["poll_error"] = poll_error_.empty() ? json(nullptr) : json(poll_error_);
    if (!assignment_) {
        j["assignment"] = nullptr;
        return j;
    }
    const auto& a = *assignment_;
    auto titles = json::array();
    for (const auto& t : a.titles) {
        titles.push_back(json{{"id", t.info_hash},
                              {"name", t.name},
                              {"ranges", ranges_json(t.ranges)},
                              {"bytes", t.bytes.value()}});
    }
    j["assignment"] = json{{"plan", a.plan},
                           {"generation", a.generation},
                           {"window", {{"start_ms", a.window_start_ms}, {"end_ms", a.window_end_ms}}},
                           {"rate_bps", a.rate.value()},
                           {"bytes", a.bytes().value()},
                           {"refresh_s", a.refresh.count()},
                           {"titles", titles}};
    return j;
}

}  // namespace toast::client
