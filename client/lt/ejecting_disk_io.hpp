// The bounded local buffer needs to drop pieces we have; libtorrent has no API for that.
// This disk_interface wraps one of libtorrent's and, for pieces a title ejected, frees their bytes on disk
// (fallocate PUNCH_HOLE) and fails every read, so libtorrent answers requests with DONT_HAVE + REJECT
// instead of serving zeros (which peers would fail the hash on and ban us for). A read that was already
// in flight when its piece was ejected is failed too, when it completes. libtorrent's own bitfield keeps
// saying "have"; EjectionRegistry is the record of what is really stored. One wrapper serves every torrent of
// a session: each title registers its torrent in the session's EjectionRegistries before adding it.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <libtorrent/disk_interface.hpp>
#include <libtorrent/session_params.hpp>
#include <libtorrent/sha1_hash.hpp>

#include "client/core/piece_types.hpp"
#include "client/lt/session_factory.hpp"

namespace toast::client {

// Which pieces of one torrent were ejected, shared by its title (writer) and the disk wrapper (reader).
class EjectionRegistry {
  public:
    // Marks `piece` ejected and frees its bytes on disk. Returns the bytes punched out (0 when the file
    // system cannot punch holes: the bytes stay on disk but are still never read back). Idempotent.
    std::uint64_t eject(PieceIndex piece);
    bool is_ejected(PieceIndex piece) const;
    std::size_t ejected_count() const;
    std::uint64_t reads_refused() const { return reads_refused_.load(); }

    // Called by the disk wrapper.
    void set_layout(const libtorrent::file_storage& files, const std::string& save_path);
    void count_refused_read() { ++reads_refused_; }

  private:
    struct Extent {
        std::filesystem::path file;
        std::int64_t offset = 0;
        std::int64_t size = 0;
    };
    std::vector<Extent> extents_of(PieceIndex piece) const;  // requires mutex_

    mutable std::mutex mutex_;
    std::shared_ptr<const libtorrent::file_storage> files_;
    std::string save_path_;
    std::set<PieceIndex> ejected_;
    std::atomic<std::uint64_t> reads_refused_{0};
};

// The registries of a session's torrents, keyed by the info-hash storage_params carries
// (info_hash_t::get_best()). Thread-safe: titles add and remove on their thread, the disk wrapper looks up
// on libtorrent's.
class EjectionRegistries {
  public:
    // The registry for `info_hash`, created on first use. Call before the torrent is added.
    std::shared_ptr<EjectionRegistry> add(const libtorrent::sha1_hash& info_hash);
    void remove(const libtorrent::sha1_hash& info_hash);
    std::shared_ptr<EjectionRegistry> find(const libtorrent::sha1_hash& info_hash) const;

  private:
    mutable std::mutex mutex_;
    std::map<libtorrent::sha1_hash, std::shared_ptr<EjectionRegistry>> registries_;
};

// A disk_io_constructor for session_params: libtorrent's disk I/O of that kind, wrapped as above.
libtorrent::disk_io_constructor_type make_ejecting_disk_io(std::shared_ptr<EjectionRegistries> registries,
                                                           DiskIoKind kind);

// The error a read of an ejected piece fails with.
const boost::system::error_category& ejection_category();

}  // namespace toast::client
