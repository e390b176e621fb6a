// The usage of `toast-client stream|play` (parse_client_args in client_options.cpp reads what it lists).
#include "client/core/client_options.hpp"

namespace toast::client {

std::string client_help_text() {
    return R"(Usage:
  toast-client stream TORRENT --save-dir DIR --listen [HOST:]PORT --stats FILE [options]
  toast-client play   TORRENT --save-dir DIR --listen [HOST:]PORT --stats FILE [--http HOST:PORT] [--player P] [options]

Streams a title through a BitTorrent swarm, falling back to the VoD server for pieces the swarm cannot deliver
before playback needs them.

Required:
  TORRENT                     the title's .torrent file
  --save-dir DIR              where the title's data is stored
  --listen [HOST:]PORT        BitTorrent listen port on every interface (0.0.0.0 and [::]), or on HOST
                              only (0 = any free port)
  --stats FILE                JSON-lines stats, one line per second and a final summary
                              (schema: common/docs/client-stats.md)

Options:
  --server URL                VoD server base URL; repeatable; tried after the torrent's url-list,
                              fastest first (default: the torrent's url-list only)
  --bitrate RATE              title bitrate, 1kbps..100Gbps, e.g. 2Mbps (default: the bitrate recorded in
                              the torrent)
  --picker P                  rarest|inorder|beta|hybrid|adaptive (default: adaptive); adaptive follows
                              the share of the bitrate its peers deliver: the whole title in order
                              from 0.75, beta at 0.7 or less, a part of the window between; until
                              they are measured, --upload-limit over the bitrate, and at most that
                              plus 0.2 after
  --inorder-window DURATION   hybrid, adaptive: pick in order within this much video ahead, 1s..24h
                              (default: 15min)
  --lookahead DURATION|none   ask peers only for pieces within this much video past the first missing
                              one, 1s..24h, or none for the whole title (default: 60s)
  --buffer-limit BYTES|PCT    bound local storage, e.g. 512MiB or 25% of the title (default: unlimited)
  --behavior B                download: leave once every piece is had; stream: leave when playback
                              ends; seed: stay until stopped (default: stream)
  --upload-limit RATE         upload cap, also on loopback, 1kbps..100Gbps, e.g. 2Mbps (default: unlimited)
  --download-limit RATE       download cap, 1kbps..100Gbps (default: unlimited)
  --choker C                  nearest: upload to the viewer just behind us in the title; leader: to the
                              viewer furthest along (for the operator's seed beside the VoD server);
                              tit-for-tat: to those sending us most; seed: to those we send fastest
                              (default: nearest)
  --unchoke-slots N           peers uploaded to at once, 1..1000
                              (default: 1 for nearest and leader, else 2)
  --max-connections N         peer connections at most, 2..10000; a full client swaps its
                              lowest-ranked peer for a newcomer (default: 40)
  --disk-io D                 posix: pieces are read and written with pread/pwrite on the network thread;
                              mmap: read from a memory map on disk threads, libtorrent's own default
                              (default: posix)
  --seed N                    seed for the picker's random choices (default: 1)
  --startup-buffer DURATION   media that must be present before playback starts, 0s..1h (default: 0s, the
                              first piece)
  --tracker URL               extra tracker; repeatable (default: the torrent's trackers only)
  --operator-peer IP:PORT     a peer of the operator's (e.g. a seed beside the VoD server): counted as
                              server-side, not as a viewer; repeatable, added to the torrent's
                              "operator_peers" (default: those only; every other peer is a viewer)
  --ask-operator M            when-needed: ask the operator's peers for pieces only while the other boxes
                              cannot deliver in time (a piece within the server fallback's reach that no
                              viewer holds, viewers late, no viewer connected); always: like any peer
                              (default: when-needed)
  --enable-dht                enable the DHT (default: off; LSD is always off). libtorrent never uses
                              the DHT, peer exchange or local discovery for a private torrent
  --upnp                      ask the home router over UPnP to forward the listen ports to this box
                              (default: off)
  --natpmp                    the same over NAT-PMP (default: off)
  --passkey KEY               this box's tracker passkey, 16-128 characters of A-Z a-z 0-9 _ -: put
                              into every tracker URL of the torrent (.../announce/KEY, or passkey=KEY
                              for other paths); the info-hash is unchanged (default: none)
  --ssl-cert FILE             this box's certificate (PEM), signed by the operator's CA: required for an
                              SSL torrent (one whose info dictionary carries the CA as "ssl-cert"),
                              whose peers accept only certificates of that CA (default: none)
  --ssl-key FILE              the certificate's private key (PEM, unencrypted)
  --ssl-listen PORT           where peers of SSL torrents connect, on --listen's address(es) (default:
                              --listen's port + 1, any free port when that is 0); only with --ssl-cert
  --log-level L               trace|debug|info|warn|error|off (default: info)
  --http HOST:PORT            play: serve the title to a player here, URL http://HOST:PORT/<file name>,
                              printed at start and in the stats (default: 127.0.0.1:0)
  --player P                  play: mpv|vlc|ffplay|none, launched on the URL at the saved position;
                              the client leaves when it exits, and a player that exits with an error
                              makes it exit non-zero with the player's message; its output goes to
                              DIR/player.log (default: none: the client serves the URL and --behavior
                              decides when it leaves). With mpv the playback position comes from mpv
                              itself (its JSON IPC); with the others it is estimated from their reads
  --player-arg ARG            play: one more argument for the player, before the URL; repeatable, e.g.
                              --player-arg=--vo=null --player-arg=--volume=50
  --token TOKEN               the operator's signed token (toast-server sign): sent on every request to the
                              server as Authorization: Bearer, renewed at the server before it expires
                              (default: none; a server with access keys then refuses the box)
  --token-file FILE           the same, read from FILE (one line); a renewed token is written back to it
  --ca-file FILE              PEM certificate(s) of the operator's CA: https:// servers must present a
                              certificate it signed, for their host name (default: the system's CAs)
  --telemetry URL|off         where the session's QoE reports go, POSTed with the token (default: the
                              first server's /telemetry); off: none. An unreachable endpoint never holds
                              playback: its reports are dropped and counted
  --telemetry-interval D      a report every D during the session, 1s..24h, and one at its end
                              (default: 5min)
  -h, --help                  show this text
)";
}

}  // namespace toast::client
