#include "client/lt/stream_session.hpp"

#include <stdexcept>

#include <boost/asio/post.hpp>
#include <libtorrent/settings_pack.hpp>

namespace lt = libtorrent;

namespace toast::client {

// Posts a pump to the io loop when libtorrent has alerts. set_alert_notify calls it on libtorrent's threads;
// detach() before the loop goes away.
class StreamSession::Notifier : public std::enable_shared_from_this<StreamSession::Notifier> {
  public:
    Notifier(boost::asio::io_context& io, StreamSession& owner) : io_(&io), owner_(&owner) {}
    void notify() {
        std::lock_guard lock(mutex_);
        if (io_ == nullptr || posted_) return;
        posted_ = true;
        boost::asio::post(*io_, [self = shared_from_this()] {
            {
                std::lock_guard guard(self->mutex_);
                self->posted_ = false;
                if (self->io_ == nullptr) return;
            }
            self->owner_->pump();
        });
    }
    void detach() {
        std::lock_guard lock(mutex_);
        io_ = nullptr;
    }

  private:
    std::mutex mutex_;
    boost::asio::io_context* io_;
    StreamSession* owner_;
    bool posted_ = false;
};

StreamSession::StreamSession(boost::asio::io_context& io, const SessionConfig& config,
                             PeerCredentials credentials, LtThread thread)
    : io_(io),
      registries_(std::make_shared<EjectionRegistries>()),
      max_connections_(torrent_connections_of(config)),
      credentials_(std::move(credentials)),
      thread_(thread) {
    control_ = std::make_shared<SwarmControl>(SwarmControl::Config{config.choker, config.unchoke_slots, 3});
    auto params = make_session_params(config);
    // A client that leaves says so to the tracker, but does not wait for it.
    params.settings.set_int(lt::settings_pack::stop_tracker_timeout, 1);
    params.disk_io_constructor = make_ejecting_disk_io(registries_, config.disk_io);
    session_ = make_session(std::move(params), control_, thread_ == LtThread::shared ? &io_ : nullptr);
}

StreamSession::~StreamSession() {
    if (notifier_) notifier_->detach();
    if (!session_) return;
    session_->set_alert_notify([] {});
    control_->detach();
    auto proxy = session_->abort();
    session_.reset();
}

void StreamSession::close(std::chrono::milliseconds bound) {
    if (thread_ != LtThread::shared || !session_) return;
    if (notifier_) notifier_->detach();
    session_->set_alert_notify([] {});
    control_->detach();
    // libtorrent's order for a session on an outside io_context: abort, destroy the session, run the
    // io_context until the abort is done, then drop the proxy.
    closing_.emplace(session_->abort());
    session_.reset();
    io_.restart();
    io_.run_for(bound);
    closing_.reset();
}

StreamSession::Added StreamSession::add(lt::add_torrent_params params, TitleEvents& title) {
    Added added;
    apply_peer_credentials(params, credentials_);
    const auto key = params.ti->info_hashes().get_best();
    auto ti = params.ti;
    added.registry = registries_->add(key);
    prepare_add_torrent_params(params, max_connections_);
    hold_until_certified(params, credentials_);
    lt::error_code ec;
    added.handle = session_->add_torrent(std::move(params), ec);
    if (ec) {
        registries_->remove(key);
        throw std::runtime_error("libtorrent refused the torrent: " + ec.message());
    }
    install_peer_certificate(added.handle, *ti, credentials_);
    titles_[added.handle] = &title;
    return added;
}

void StreamSession::remove(const lt::torrent_handle& handle, bool remove_torrent) {
    titles_.erase(handle);
    if (!remove_torrent || !session_ || !handle.is_valid()) return;
    registries_->remove(handle.info_hashes().get_best());
    session_->remove_torrent(handle);
}

void StreamSession::pump() {
    // A title reacting to an event may finish and stop the loop; a pump inside a pump would reorder events.
    if (pumping_ || !session_) return;
    pumping_ = true;
    alerts_.clear();
    session_->pop_alerts(&alerts_);
    events_.clear();
    translate_alerts(alerts_, events_);
    for (const auto& e : events_) {
        if (!e.torrent.is_valid()) {
            if (session_handler_) session_handler_(e);
            continue;
        }
        auto it = titles_.find(e.torrent);
        if (it != titles_.end()) it->second->on_event(e);
    }
    pumping_ = false;
}

void StreamSession::pump_on_alerts() {
    if (notifier_) return;
    notifier_ = std::make_shared<Notifier>(io_, *this);
    session_->set_alert_notify([n = notifier_] { n->notify(); });
}

}  // namespace toast::client
