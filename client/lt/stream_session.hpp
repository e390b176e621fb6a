// The shared part of the client: one libtorrent session (one listen port, one set of peer connections, the
// Toast plugin, the ejecting disk I/O) for every title a process streams, and the alert pump that turns
// libtorrent's alerts into events and hands each to the title it concerns. `toast-client stream|play` runs
// one title on it; a long-running service runs many. Everything here runs on the caller's io_context thread;
// libtorrent runs on its own threads and is reached through its handles and the SwarmControl plugin.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <libtorrent/add_torrent_params.hpp>
#include <libtorrent/session.hpp>
#include <libtorrent/torrent_handle.hpp>

#include "client/lt/ejecting_disk_io.hpp"
#include "client/lt/lt_events.hpp"
#include "client/lt/peer_credentials.hpp"
#include "client/lt/session_factory.hpp"
#include "client/lt/swarm_control.hpp"

namespace toast::client {

// What a title receives from the session: the events about its torrent.
class TitleEvents {
  public:
    virtual ~TitleEvents() = default;
    virtual void on_event(const LtEvent& event) = 0;
};

// Where libtorrent runs. `own`: on a thread of its own; every synchronous torrent_handle call is a round trip
// to it, and every alert or request from the title's thread wakes the other. `shared`: on the session's
// io_context, so the title and libtorrent take turns on one thread and nothing wakes anything but sockets and
// timers; a synchronous libtorrent call is then possible only from inside that io_context's handlers (it
// would wait for itself otherwise), and libtorrent stops only while the io_context runs (close()).
enum class LtThread { own, shared };

class StreamSession {
  public:
    // Throws std::runtime_error when libtorrent cannot be set up. `credentials` go with every torrent added
    // (peer_credentials.hpp).
    StreamSession(boost::asio::io_context& io, const SessionConfig& config, PeerCredentials credentials = {},
                  LtThread thread = LtThread::own);
    // Aborts the session without waiting for trackers (stop_tracker_timeout is short). LtThread::shared:
    // call close() first (without it libtorrent's last handlers are dropped with the io_context).
    ~StreamSession();
    StreamSession(const StreamSession&) = delete;
    StreamSession& operator=(const StreamSession&) = delete;

    struct Added {
        libtorrent::torrent_handle handle;
        std::shared_ptr<EjectionRegistry> registry;  // the torrent's ejected pieces
    };
    // Adds a torrent (non-auto-managed, unpaused, with the box's passkey and certificate) whose events go to
    // `title` until remove(). Throws std::runtime_error when libtorrent refuses it, or when it is an SSL
    // torrent the box has no fitting certificate for.
    Added add(libtorrent::add_torrent_params params, TitleEvents& title);
    // No more events go to the title; `remove_torrent` also takes the torrent out of the session (its files
    // stay).
    void remove(const libtorrent::torrent_handle& handle, bool remove_torrent);

    // Pops libtorrent's alerts and hands each event to its title; session events (a listen failure) go to
    // the session handler. Cheap when nothing is queued.
    void pump();
    // From now on, queued alerts wake the io loop for a pump at once instead of waiting for the next one
    // (a player may be waiting for a piece).
    void pump_on_alerts();
    void on_session_event(std::function<void(const LtEvent&)> handler) {
        session_handler_ = std::move(handler);
    }

    // LtThread::shared, outside the io_context's handlers, once the titles are done: aborts libtorrent (the
    // trackers hear that the box leaves, peers are disconnected) and runs the io_context until it is done,
    // at most `bound`. Idempotent; afterwards only remove() and control() may be used.
    void close(std::chrono::milliseconds bound);

    boost::asio::io_context& io() { return io_; }
    libtorrent::session& session() { return *session_; }
    SwarmControl& control() { return *control_; }

  private:
    class Notifier;

    boost::asio::io_context& io_;
    std::shared_ptr<EjectionRegistries> registries_;
    int max_connections_;  // per torrent, as for the session
    PeerCredentials credentials_;
    std::shared_ptr<SwarmControl> control_;
    LtThread thread_;
    std::unique_ptr<libtorrent::session> session_;
    std::optional<libtorrent::session_proxy> closing_;  // LtThread::shared: libtorrent aborting
    std::map<libtorrent::torrent_handle, TitleEvents*> titles_;
    std::function<void(const LtEvent&)> session_handler_;
    std::shared_ptr<Notifier> notifier_;
    std::vector<libtorrent::alert*> alerts_;
    std::vector<LtEvent> events_;
    bool pumping_ = false;
};

}  // namespace toast::client
