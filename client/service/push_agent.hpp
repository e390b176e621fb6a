// The box's side of pre-placement (`toast-client serve --push-quota`): asks the operator's server for its
// assignment (GET /push/assignment, at start and every `refresh_s` the server names), checks it
// (client/core/push_assignment: fields, box, quota, then each title against its torrent, fetched from the
// server when the box does not have the title), and only when every check passes adopts it: titles it
// lacks are added as pushed titles (stopped: every piece priority 0, so they download nothing from peers
// and seed what they get, as partial seeds), pushed titles no longer assigned leave, and the assignment is
// written to the save dir (push.json) so a restarted box resumes it. A refused assignment is logged with
// what is wrong and changes nothing.
//
// Every 250 ms the fetch policy (client/core/push_fetch_policy) decides, from whether a title plays, the
// window, the rate and the push quota, which assigned pieces to fetch; they come from the server by HTTP
// Range (HttpFetcher, as the server fallback fetches) and go into the title with add_piece. A title that
// starts playing cancels every fetch at once. Runs on the service's io_context.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "client/core/push_assignment.hpp"
#include "client/core/push_fetch_policy.hpp"
#include "client/lt/http_fetcher.hpp"
#include "client/lt/lt_events.hpp"
#include "client/service/torrent_download.hpp"

namespace toast::client {

struct ServiceTitle;

// What the agent asks of the service that owns the titles.
class PushHost {
  public:
    virtual ~PushHost() = default;
    virtual bool playing() = 0;  // a title plays
    virtual ServiceTitle* title(const std::string& id) = 0;
    virtual std::vector<ServiceTitle*> pushed_titles() = 0;
    // Adds a stopped title from its torrent's bytes, held by push; nullptr with `error` on failure.
    virtual ServiceTitle* add_pushed(const std::string& torrent, const std::string& origin,
                                     std::string* error) = 0;
    virtual void remove(const std::string& id) = 0;
};

struct PushAgentConfig {
    std::string server;  // base URL, no trailing slash
    std::string box_id;
    Bytes quota{0};
    std::optional<BitRate> rate;    // the box's cap; the server's rate caps too
    std::optional<BitRate> upload;  // reported to the planner when set
    std::filesystem::path save_dir;
    ServerAccess access;  // the box's token and CA for every request to the server
};

class PushAgent {
  public:
    PushAgent(boost::asio::io_context& io, PushHost& host, PushAgentConfig config);
    ~PushAgent();
    PushAgent(const PushAgent&) = delete;
    PushAgent& operator=(const PushAgent&) = delete;

    // Resumes the saved assignment, asks the server, starts the fetch ticks.
    void start();
    void stop();
    // A title starts playing: every fetch in flight stops now (the next tick would too).
    void on_play_started();
    // A stopped title's torrent event (piece_finished, hash_failed).
    void on_seed_event(const std::string& id, const LtEvent& e);
    void on_title_removed(const std::string& id);

    PushState state() const { return state_; }
    std::uint64_t push_bytes() const { return push_bytes_; }
    const std::optional<PushAssignment>& assignment() const { return assignment_; }
    nlohmann::ordered_json status_json();

  private:
    struct Pending;
    using Key = std::pair<std::string, std::int32_t>;  // title id, piece
    void load_saved();
    void poll();
    void schedule_poll(std::chrono::seconds after);
    void on_answer(HttpCallResult r);
    void check_torrent(const std::shared_ptr<Pending>& p, const AssignedTitle& t, const std::string& bytes);
    void finish(const std::shared_ptr<Pending>& p);
    void refuse(const std::string& why);
    void commit(const std::shared_ptr<Pending>& p);
    void tick();
    void cancel_all();
    HttpFetcher& fetcher(ServiceTitle& t);
    void on_piece(const std::string& id, const PieceRequest& r, std::vector<char> data);
    Bytes held();

    boost::asio::io_context& io_;
    PushHost& host_;
    PushAgentConfig config_;
    PushFetchPolicy policy_;
    boost::asio::steady_timer poll_timer_;
    boost::asio::steady_timer tick_timer_;
    std::optional<PushAssignment> assignment_;
    std::shared_ptr<Pending> pending_;  // the answer being checked
    std::map<std::string, std::unique_ptr<HttpFetcher>> fetchers_;
    std::map<Key, Bytes> in_flight_;
    std::map<Key, std::pair<Bytes, std::chrono::steady_clock::time_point>>
        writing_;  // add_piece'd, unchecked
    PushState state_ = PushState::no_assignment;
    std::uint64_t push_bytes_ = 0;
    std::uint64_t polls_ = 0;
    std::uint64_t refused_ = 0;
    std::string error_;       // the last refusal
    std::string poll_error_;  // the last poll that got no usable answer
    bool stopped_ = false;
};

}  // namespace toast::client
