// The seam between the block store and the HTTP layer: look a title up by name, read a byte range of it.
// The store decides which disk and replica serve each block; HTTP only sends what comes back.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "server/core/demand_trace.hpp"
#include "toast/common/tier.hpp"
#include "toast/common/units.hpp"

namespace toast::server {

// Where the blocks of a title ingested on a tier live: `replicas` nodes each, by rendezvous placement. This
// node serves the blocks it holds from its disks and relays the others from their holders.
struct TitleTier {
    TierLayout layout;
    NodeIndex self;
    std::vector<std::vector<NodeIndex>> holders;  // per block, the highest rendezvous weight first
    bool holds(std::uint64_t block) const {
        const auto& h = holders.at(block);
        return std::find(h.begin(), h.end(), self) != h.end();
    }
};

// What HTTP needs to answer for a title. Immutable: re-ingesting a title publishes a new TitleInfo. Holding
// one keeps that version's blocks readable (and on disk) until the last holder lets go.
struct TitleInfo {
    std::string name;
    std::uint64_t size = 0;
    BitRate bitrate{0};
    std::uint64_t block_size = 0;
    std::string etag;  // strong validator, quoted ("\"...\""); changes whenever the title is re-ingested
    std::chrono::system_clock::time_point last_modified;
    // The disks holding each block (manifest order), so admission control can charge a stream's reads to
    // the disks it may read from.
    std::vector<std::vector<std::uint32_t>> block_disks;
    std::string file_name;  // the file inside the title's torrent: the name plus its container's extension
    std::string info_hash;  // the torrent's v1 info-hash (hex); empty when the store keeps no torrent
    // Bytes the player first needs per round (MPEG-TS and MP4 titles): a paced stream sends and reserves by
    // it instead of by the bitrate. Null for titles ingested without one.
    std::shared_ptr<const DemandTrace> trace;
    // Null for a title this server holds whole; on a tier, the holders of each block (block_disks then lists
    // every disk for a block held elsewhere: admission charges a stream as if this node read all of it, see
    // docs/server-storage.md "A tier of nodes").
    std::shared_ptr<const TitleTier> tier;
};

// An open file descriptor kept alive while any segment refers to it (defined in server/io/open_file.hpp;
// the HTTP layer sendfile(2)s from it).
class OpenFile;

// A region of an open file whose bytes have been checked; send with sendfile(2).
struct FileSegment {
    std::shared_ptr<const OpenFile> file;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};
// Bytes already in memory.
struct MemorySegment {
    std::shared_ptr<const std::string> data;
    std::uint64_t offset = 0;  // within *data
    std::uint64_t length = 0;
};
using Segment = std::variant<FileSegment, MemorySegment>;

enum class ReadStatus {
    ok,
    unavailable,  // every replica of a needed block is offline, missing or corrupt: HTTP answers 503
    io_error,     // anything else the disk reported: HTTP answers 500 for that request only
};

struct ReadResult {
    ReadStatus status = ReadStatus::ok;
    std::string message;            // for the log line when status != ok
    std::vector<Segment> segments;  // in order, lengths summing to the requested length when ok
    // How long after the request's deadline its last byte was ready (0 when met, or without a deadline).
    std::chrono::nanoseconds late{0};
    // Unavailable because a block has no readable replica: that whole block's bytes of the title, [first,
    // last]. A client can then ask its peers at once for every piece in it, not only for the ones it asked.
    std::optional<std::pair<std::uint64_t, std::uint64_t>> unavailable_block;
};

using ReadHandler = std::function<void(ReadResult)>;

struct ReadRequest {
    std::shared_ptr<const TitleInfo> title;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;  // the caller keeps [offset, offset + length) within the title
    // When the bytes are needed; none means best effort. Disk queues that order by deadline serve earlier
    // deadlines first (the default queue is first come, first served).
    std::optional<std::chrono::steady_clock::time_point> deadline{};
    // Re-check every byte against the manifest's checksums even where the store already verified this file
    // (the client asked with Cache-Control: no-cache after the bytes failed its own hash check): a replica
    // that rotted after it was verified is found, marked, and another replica serves.
    bool revalidate = false;
};

class TitleStore {
  public:
    virtual ~TitleStore() = default;
    // nullptr when no manifest by that exact name exists. Names are never turned into paths.
    virtual std::shared_ptr<const TitleInfo> find(std::string_view name) const = 0;
    // Every title's current version, in no particular order.
    virtual std::vector<std::shared_ptr<const TitleInfo>> titles() const = 0;
    // The title's .torrent as the store keeps it (a copy on every disk): the first copy whose info-hash is
    // the title's; nullopt when the store keeps none or no copy is intact. A small synchronous file read.
    virtual std::optional<std::string> torrent(const TitleInfo& title) const = 0;
    // Blocks are split over the per-disk queues; `done` runs exactly once, on a store thread, when every
    // block is done.
    virtual void read(ReadRequest request, ReadHandler done) = 0;
    // For shutdown: reads queued or in progress now stop waiting (on emulated disk timing, injected latency
    // or a queue) and complete soon, with io_error unless their bytes were already read. Later reads are
    // served normally.
    virtual void interrupt_reads() = 0;
};

}  // namespace toast::server
