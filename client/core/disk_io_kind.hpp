// Which of libtorrent's disk back ends a session writes and reads pieces with: chosen on the command line
// (`--disk-io`, `disk_io` in the service's config) and handed to the session as it is.
#pragma once

#include <optional>
#include <string_view>

namespace toast::client {

// Both keep a title's pieces in its file; they differ in who touches the pages.
enum class DiskIoKind {
    // libtorrent's posix_disk_io: pread/pwrite on the network thread. A viewer writes and reads a few
    // hundred KiB a second, each a copy from or into the page cache, with no thread to wake.
    posix,
    // libtorrent's default on Linux (mmap_disk_io): writes with pwrite, reads by copying from a mapping
    // of the file, on disk threads. A read that faults makes the kernel read ahead around it, and past the
    // pieces written so far that means zero-filling the file's holes; with many viewers on one machine those
    // faults come in bursts that hold every core for seconds, and viewers stall.
    mmap,
};

// "posix" or "mmap"; none for anything else.
inline std::optional<DiskIoKind> parse_disk_io(std::string_view text) {
    if (text == "posix") return DiskIoKind::posix;
    if (text == "mmap") return DiskIoKind::mmap;
    return std::nullopt;
}

}  // namespace toast::client
