// `toast-client serve`: the set-top-box service. One StreamSession (one libtorrent session, one listen port)
// carries every title; the ControlServer answers the control API, the piece map page and the status event
// stream on a loopback port. A stopped title stays in the session seeding the pieces it has (downloading
// nothing); play replaces it with a TitleStream in play mode whose player endpoint the answer names; stop
// turns it back. The decisions (routes and checks, state changes, evictions, the saved title list) are the
// core's (client/core/service_api, service_titles); this class carries them out and persists the list.
//
// Files under the save dir: titles.json (the list), titles/ID/title.torrent, titles/ID/<the title's file>,
// its resume point and stats.jsonl. Everything runs on the io_context's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "client/core/client_tuning.hpp"
#include "client/core/service_api.hpp"
#include "client/core/service_options.hpp"
#include "client/core/service_titles.hpp"
#include "client/lt/server_access.hpp"
#include "client/lt/stream_session.hpp"
#include "client/lt/telemetry_sender.hpp"
#include "client/lt/title_stream.hpp"
#include "client/service/control_server.hpp"
#include "client/service/push_agent.hpp"
#include "client/service/server_link.hpp"

namespace toast::client {

struct ServiceTitle;  // service_title.hpp

class TitleService : private PushHost {
  public:
    // Creates the session, resumes the saved titles (a title whose files are unusable is dropped with a
    // warning) and binds the control API. Throws std::runtime_error when the save dir, the session or the
    // API address cannot be used.
    TitleService(boost::asio::io_context& io, ServeOptions options, ClientTuning tuning = {});
    ~TitleService() override;
    TitleService(const TitleService&) = delete;
    TitleService& operator=(const TitleService&) = delete;

    // Starts the status ticks (once a second: quota, events).
    void start();
    // Stops every playing title (their positions are saved), saves the list and closes the API. Idempotent.
    void stop();
    // `done` runs once the titles' last QoE reports are sent, or after `limit`.
    void flush_reports(std::chrono::milliseconds limit, std::function<void()> done);

    std::uint16_t api_port() const { return server_->port(); }
    std::uint16_t listen_port();

    // Answers one control API request (the ControlServer's handler).
    void handle(const ControlRequest& request, ControlServer::Reply reply);

  private:
    // PushHost
    bool playing() override;
    ServiceTitle* title(const std::string& id) override { return find(id); }
    std::vector<ServiceTitle*> pushed_titles() override;
    ServiceTitle* add_pushed(const std::string& torrent, const std::string& origin,
                             std::string* error) override;
    void remove(const std::string& id) override { remove_title(id); }

    // A new stopped title from its torrent's bytes (stored under the save dir, seeding what it has); a
    // 4xx/5xx answer saying why not.
    struct Added {
        ServiceTitle* title = nullptr;
        bool existed = false;
        ControlResponse refusal;
    };
    Added create_title(const std::string& bytes, const std::string& origin, bool pushed);
    void load_box_id();
    void load_saved();
    void save_list();
    ServiceTitle* find(const std::string& id);
    void add_title(const std::string& bytes, const std::string& origin, const ControlServer::Reply& reply);
    void play(ServiceTitle& t, const ControlServer::Reply& reply);
    void stop_title(ServiceTitle& t);
    void remove_title(const std::string& id);
    void start_seeding(ServiceTitle& t);
    void stop_seeding(ServiceTitle& t);
    void end_stream(ServiceTitle& t);
    bool make_room(ServiceTitle* for_title, ControlResponse* refusal);
    nlohmann::ordered_json service_json();
    void schedule_tick();
    void publish_status();
    // The server the token is renewed at and QoE reports go to: the first --server, else the first server
    // of the title just played. Set up once, when first known.
    void link_server(const std::vector<ServerUrl>& title_servers);

    boost::asio::io_context& io_;
    ServeOptions options_;
    ClientTuning tuning_;
    std::filesystem::path titles_dir_;
    std::unique_ptr<StreamSession> session_;
    std::map<std::string, std::unique_ptr<ServiceTitle>> titles_;
    std::unique_ptr<ControlServer> server_;
    ServerAccess access_;
    std::unique_ptr<TokenRenewer> renewer_;
    std::unique_ptr<TelemetrySender> telemetry_;
    std::unique_ptr<ServerLink> link_;  // with a --server
    std::unique_ptr<PushAgent> push_;   // with a --server and a --push-quota
    boost::asio::steady_timer tick_timer_;
    bool stopped_ = false;
};

// Unix time in milliseconds (what the saved list records).
std::int64_t unix_ms_now();

}  // namespace toast::client
