#include "server/io/verify.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include <libtorrent/error_code.hpp>
#include <libtorrent/torrent_info.hpp>

#include "server/core/block_math.hpp"
#include "server/core/crc32c.hpp"
#include "server/io/catalogue.hpp"
#include "server/io/title_torrent.hpp"

namespace toast::server {

namespace {

// Empty when the replica is intact, else what is wrong with it.
std::string check_replica(const std::filesystem::path& path, std::uint64_t expected, const BlockRecord& rec,
                          std::uint64_t chunk, std::vector<char>& buf, std::uint64_t& bytes) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? "missing" : std::string("unreadable: ") + std::strerror(errno);
    struct stat st {};
    std::string problem;
    if (::fstat(fd, &st) != 0 || static_cast<std::uint64_t>(st.st_size) != expected) {
        problem = "corrupt: " + std::to_string(st.st_size) + " bytes, expected " + std::to_string(expected);
    }
    buf.resize(chunk);
    for (std::uint64_t c = 0; problem.empty() && c < rec.chunk_crcs.size(); ++c) {
        const auto len = static_cast<std::size_t>(std::min(chunk, expected - c * chunk));
        std::size_t got = 0;
        while (got < len) {
            auto n = ::pread(fd, buf.data() + got, len - got, static_cast<off_t>(c * chunk + got));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += static_cast<std::size_t>(n);
        }
        bytes += got;
        if (got != len) {
            problem = "unreadable at chunk " + std::to_string(c);
        } else if (crc32c(buf.data(), len) != rec.chunk_crcs[c]) {
            problem = "corrupt: chunk " + std::to_string(c) + " fails its CRC-32C";
        }
    }
    ::close(fd);
    return problem;
}

// Empty when a disk's copy of the title's torrent is the one the manifest names, else what is wrong with it.
std::string check_torrent(const std::filesystem::path& path, const Manifest& m) {
    std::string problem;
    auto bytes = read_torrent_file(path, problem);
    if (!bytes) return problem;
    const auto& text = *bytes;
    libtorrent::error_code ec;
    libtorrent::torrent_info ti(text.data(), static_cast<int>(text.size()), ec);
    if (ec) return "corrupt: " + ec.message();
    std::ostringstream hash;
    hash << ti.info_hashes().v1;
    if (hash.str() != m.torrent->info_hash)
        return "corrupt: info-hash " + hash.str() + ", the manifest has " + m.torrent->info_hash;
    if (ti.num_files() != 1 || ti.files().file_name(libtorrent::file_index_t(0)) != m.torrent->name ||
        static_cast<std::uint64_t>(ti.total_size()) != m.size)
        return "corrupt: not one file \"" + m.torrent->name + "\" of " + std::to_string(m.size) + " bytes";
    return {};
}

}  // namespace

VerifyReport verify_store(const ServerConfig& config, const std::optional<std::string>& title) {
    VerifyReport report;
    std::vector<std::filesystem::path> disks;
    for (const auto& d : config.disks)
        disks.push_back(d.path);
    Catalogue catalogue(disks);
    auto scan = catalogue.scan();
    report.problems = scan.problems;
    if (title && !scan.titles.count(*title)) report.problems.push_back("no title named \"" + *title + "\"");
    std::vector<char> buf;
    for (const auto& [name, entry] : scan.titles) {
        if (title && name != *title) continue;
        const auto& m = entry.manifest;
        ++report.titles;
        for (std::size_t d = 0; d < disks.size(); ++d) {
            auto it = entry.by_disk.find(d);
            if (it == entry.by_disk.end()) {
                report.notes.push_back("title \"" + name + "\": disk " + std::to_string(d) +
                                       " has no manifest copy");
            } else if (!(it->second == m)) {
                report.notes.push_back("title \"" + name + "\": disk " + std::to_string(d) +
                                       " has an older manifest (generation " +
                                       std::to_string(it->second.generation) + ")");
            }
        }
        for (std::size_t d = 0; m.torrent && d < disks.size(); ++d) {
            const auto path = disks[d] / m.torrent->file;
            if (auto problem = check_torrent(path, m); !problem.empty()) {
                report.problems.push_back("title \"" + name + "\" torrent on disk " + std::to_string(d) +
                                          " (" + path.string() + "): " + problem);
            }
        }
        for (std::size_t b = 0; b < m.blocks.size(); ++b) {
            ++report.blocks;
            const auto expected = block_length(b, m.size, m.block_size);
            for (const auto& r : m.blocks[b].replicas) {
                ++report.replicas;
                const auto path = disks[r.disk] / r.file;
                auto problem = check_replica(path, expected, m.blocks[b], m.chunk_size, buf, report.bytes);
                if (!problem.empty()) {
                    report.problems.push_back("title \"" + name + "\" block " + std::to_string(b) +
                                              " replica on disk " + std::to_string(r.disk) + " (" +
                                              path.string() + "): " + problem);
                }
            }
        }
    }
    return report;
}

}  // namespace toast::server
