// The libtorrent plugins SwarmControl installs: one per session; one per torrent (CANCEL for the requests
// still outstanding when the server's bytes for them arrive and when a server piece passes, lt_donthave
// on ejection, the Toast chokers); one per peer connection (ToastPeerPlugin, toast_peer_plugin.hpp). They run
// on libtorrent's network thread and share what they learn through SwarmControl.
#pragma once

#include <memory>

#include <libtorrent/extensions.hpp>
#include <libtorrent/sha1_hash.hpp>

#include "client/core/piece_types.hpp"

namespace toast::client {

class SwarmControl;
class ToastTorrentPlugin;

std::shared_ptr<libtorrent::plugin> make_toast_plugin(std::shared_ptr<SwarmControl> control);

// Network thread: sends lt_donthave for `piece` to the peers of `plugin` if it is `torrent`'s plugin.
void send_dont_have(ToastTorrentPlugin& plugin, const libtorrent::sha1_hash& torrent, PieceIndex piece);
// Network thread: cancels the requests `plugin`'s peers still owe us for blocks of `piece` inside
// [offset, offset + length), if it is `torrent`'s plugin.
void cancel_requests(ToastTorrentPlugin& plugin, const libtorrent::sha1_hash& torrent, PieceIndex piece,
                     Bytes offset, Bytes length);
// Network thread: tells `plugin`'s operator peers whether we are interested (SwarmControl::
// set_operator_wanted), if it is `torrent`'s plugin.
void tell_operator_interest(ToastTorrentPlugin& plugin, const libtorrent::sha1_hash& torrent);

}  // namespace toast::client
