#include "client/lt/peer_credentials.hpp"

#include <stdexcept>

#include <libtorrent/torrent_flags.hpp>
#include <libtorrent/torrent_info.hpp>

#include "client/core/tracker_url.hpp"
#include "toast/common/peer_certs.hpp"
#include "toast/common/read_file.hpp"

namespace lt = libtorrent;

namespace toast::client {

namespace {

// RFC 7919's ffdhe2048 group: libtorrent's set_ssl_certificate_buffer loads DH parameters along with the
// certificate and posts an error without them. A published constant, not a secret.
constexpr const char* kDhParams = R"(-----BEGIN DH PARAMETERS-----
MIIBCAKCAQEA//////////+t+FRYortKmq/cViAnPTzx2LnFg84tNpWp4TZBFGQz
+8yTnc4kmz75fS/jY2MMddj2gbICrsRhetPfHtXV/WVhJDP1H18GbtCFY2VVPe0a
87VXE15/V8k1mE8McODmi3fipona8+/och3xWKE2rec1MKzKT0g6eXq8CrGCsyT7
YdEIqUuyyOP7uWrat2DX9GgdT0Kj3jlN9K5W7edjcrsZCwenyO4KbXCeAvzhzffi
7MA0BM0oNC9hkXL+nOmFg/+OTxIy7vKBg8P+OxtMb61zO7X8vC7CIAXFjvGDfRaD
ssbzSibBsu/6iGtCOGEoXJf//////////wIBAg==
-----END DH PARAMETERS-----
)";

std::string read_pem(const std::filesystem::path& path, const char* what) {
    try {
        return read_file(path);
    } catch (const FileReadError& e) {
        throw std::runtime_error(std::string(what) + " " + path.string() + ": cannot be read (" + e.reason() +
                                 ")");
    }
}

}  // namespace

PeerCredentials load_peer_credentials(std::optional<std::string> passkey,
                                      const std::filesystem::path& ssl_cert,
                                      const std::filesystem::path& ssl_key) {
    PeerCredentials c;
    c.passkey = std::move(passkey);
    if (ssl_cert.empty() && ssl_key.empty()) return c;
    c.ssl_cert = read_pem(ssl_cert, "--ssl-cert");
    c.ssl_key = read_pem(ssl_key, "--ssl-key");
    // The CA is the torrent's, checked when a torrent is added; here, that the two belong together.
    if (auto problem = check_certificate_key(c.ssl_cert, c.ssl_key)) {
        throw std::runtime_error("--ssl-cert " + ssl_cert.string() + " / --ssl-key " + ssl_key.string() +
                                 ": " + *problem);
    }
    return c;
}

void apply_peer_credentials(lt::add_torrent_params& params, const PeerCredentials& credentials) {
    if (!params.ti) return;
    if (params.ti->priv())
        params.flags |=
            lt::torrent_flags::disable_dht | lt::torrent_flags::disable_lsd | lt::torrent_flags::disable_pex;
    const auto ca_view = params.ti->ssl_cert();
    const std::string ca(ca_view.data(), ca_view.size());
    if (!ca.empty()) {
        const std::string name = params.ti->name();
        if (credentials.ssl_cert.empty()) {
            throw std::runtime_error("torrent '" + name +
                                     "' is for a private swarm whose peers authenticate with certificates "
                                     "of the operator's CA (it carries \"ssl-cert\"): give this box's "
                                     "certificate and key (--ssl-cert, --ssl-key)");
        }
        if (auto problem = check_peer_certificate(credentials.ssl_cert, credentials.ssl_key, ca, name))
            throw std::runtime_error("torrent '" + name + "': --ssl-cert: " + *problem);
    }
    if (!credentials.passkey) return;
    const auto& key = *credentials.passkey;
    std::vector<std::string> urls;
    std::vector<int> tiers;
    for (const auto& t : params.ti->trackers()) {
        urls.push_back(with_passkey(t.url, key));
        tiers.push_back(t.tier);
    }
    for (std::size_t i = 0; i < params.trackers.size(); ++i) {
        urls.push_back(with_passkey(params.trackers[i], key));
        tiers.push_back(i < params.tracker_tiers.size() ? params.tracker_tiers[i] : 0);
    }
    // libtorrent adds params.trackers to the torrent_info's own: the copy goes in without them. Trackers
    // are outside the info dictionary, so the info-hash stays.
    auto ti = std::make_shared<lt::torrent_info>(*params.ti);
    ti->clear_trackers();
    params.ti = std::move(ti);
    params.trackers = std::move(urls);
    params.tracker_tiers = std::move(tiers);
}

void hold_until_certified(lt::add_torrent_params& params, const PeerCredentials& credentials) {
    if (params.ti && !params.ti->ssl_cert().empty() && !credentials.ssl_cert.empty())
        params.flags |= lt::torrent_flags::paused;
}

void install_peer_certificate(lt::torrent_handle handle, const lt::torrent_info& ti,
                              const PeerCredentials& credentials) {
    if (ti.ssl_cert().empty() || credentials.ssl_cert.empty()) return;
    handle.set_ssl_certificate_buffer(credentials.ssl_cert, credentials.ssl_key, kDhParams);
    // Both calls are queued to libtorrent's network thread in this order: the torrent makes its first
    // connection with the certificate in place.
    handle.resume();
}

}  // namespace toast::client
