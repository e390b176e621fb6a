#include "server/io/ingest.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <set>

#include <libtorrent/hasher.hpp>

#include "server/core/block_math.hpp"
#include "server/core/container.hpp"
#include "server/core/crc32c.hpp"
#include "server/core/demand_trace.hpp"
#include "server/core/placement.hpp"
#include "server/io/catalogue.hpp"
#include "server/io/store_upkeep.hpp"
#include "server/io/title_torrent.hpp"
#include "toast/common/durable_file.hpp"
#include "toast/common/peer_certs.hpp"
#include "toast/common/read_file.hpp"

namespace toast::server {

namespace fs = std::filesystem;
namespace lt = libtorrent;

namespace {

constexpr std::uint64_t kMinBlock = 4 * 1024;
constexpr std::uint64_t kMaxBlock = 256 * 1024 * 1024;

[[noreturn]] void io_fail(const std::string& what, const fs::path& path, int err) {
    throw IngestError(what + " " + path.string() + ": " + std::strerror(err));
}

std::string new_version_id() {
    std::random_device rd;
    const auto now = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    std::uint64_t v = (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ now ^
                      (static_cast<std::uint64_t>(::getpid()) << 40);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

void write_block_file(const fs::path& target, const char* data, std::size_t size) {
    auto tmp = temporary_name_for(target);
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) io_fail("cannot create", tmp, errno);
    std::size_t done = 0;
    while (done < size) {
        auto n = ::write(fd, data + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            ::close(fd);
            ::unlink(tmp.c_str());
            io_fail("cannot write", tmp, err);
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        io_fail("cannot fsync", tmp, err);
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        io_fail("cannot rename", target, err);
    }
}

// The source's demand trace: nullopt for a file that is neither MPEG-TS nor MP4; a parse failure is an error.
std::optional<DemandTrace> source_trace(const fs::path& media, std::uint64_t size,
                                        std::chrono::nanoseconds round) {
    const int fd = ::open(media.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) io_fail("cannot open media file", media, errno);
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    if (map == MAP_FAILED) io_fail("cannot map media file", media, err);
    const std::span<const std::uint8_t> bytes(static_cast<const std::uint8_t*>(map), size);
    std::optional<DemandTrace> trace;
    std::string error;
    const auto container = detect_container(bytes);
    if (container != MediaContainer::unknown) {
        auto r = extract_demand_trace(bytes, round);
        trace = std::move(r.trace);
        error = std::move(r.error);
    }
    ::munmap(map, size);
    if (container != MediaContainer::unknown && !trace) {
        throw IngestError("media file " + media.string() + " looks like " +
                          std::string(to_string(container)) + " but its demand trace cannot be read: " +
                          error + " (--no-trace ingests it at a constant bitrate)");
    }
    return trace;
}

// The same bytes give the same id on every node: SHA-1 over the size, the piece size and the pieces' hashes.
std::string content_id(std::uint64_t size, std::uint64_t piece_size,
                       const std::vector<lt::sha1_hash>& pieces) {
    lt::hasher h;
    const auto head = std::to_string(size) + ":" + std::to_string(piece_size) + ":";
    h.update(head.data(), static_cast<int>(head.size()));
    for (const auto& p : pieces)
        h.update(p.data(), static_cast<int>(p.size()));
    const auto digest = h.final();
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < 8; ++i) {
        const auto byte = static_cast<unsigned char>(digest[static_cast<int>(i)]);
        out += kHex[byte >> 4];
        out += kHex[byte & 15];
    }
    return out;
}

bool valid_announce(const std::string& url) {
    return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0 || url.rfind("udp://", 0) == 0;
}

// What an ingest will write, every argument checked: nothing is written before all of it is known good.
struct IngestPlan {
    std::uint64_t size = 0;     // the media file's
    std::int64_t modified = 0;  // the media file's modification time, Unix seconds
    fs::path torrent_dir;       // where --torrent goes
    PlacementPolicy policy{};
    std::optional<DemandTrace> trace;
    BitRate bitrate{0};
    std::uint64_t block_size = 0;
    std::uint64_t piece_size = 0;
    bool private_torrent = false;  // BEP 27
    std::string peer_ca;           // PEM of the swarm's CA: an SSL torrent; empty for none
};

// The media file's size and modification time; it must be a regular file.
void stat_media(const fs::path& media, IngestPlan& plan) {
    struct stat st {};
    if (::stat(media.c_str(), &st) != 0) io_fail("cannot read media file", media, errno);
    if (!S_ISREG(st.st_mode)) throw IngestError("media file " + media.string() + " is not a regular file");
    plan.size = static_cast<std::uint64_t>(st.st_size);
    plan.modified = static_cast<std::int64_t>(st.st_mtime);
}

}  // namespace

std::uint64_t tier_block_size(std::uint64_t block_size, std::uint64_t piece_size) {
    const auto pieces = std::max<std::uint64_t>(1, (block_size + piece_size / 2) / piece_size);
    return pieces * piece_size;
}

namespace {

// The block size (the option's, the config's, else what the title plays in one time slice) and the piece
// size, each checked. On a tier every piece lies in one block, so that it has one pair of nodes.
void choose_sizes(const ServerConfig& config, const IngestOptions& opt, IngestPlan& plan) {
    plan.block_size = opt.block_size
                          ? opt.block_size->value()
                          : (config.block_size ? config.block_size->value()
                                               : bytes_in(plan.bitrate, config.time_slice).value());
    if (plan.block_size < kMinBlock || plan.block_size > kMaxBlock) {
        throw IngestError("block size " + std::to_string(plan.block_size) +
                          " bytes is outside 4 KiB..256 MiB" +
                          (opt.block_size || config.block_size ? "" : " (bitrate x time_slice)"));
    }
    plan.piece_size = opt.piece_size.value_or(config.piece_size).value();
    if (plan.piece_size < 16 * 1024 || (plan.piece_size & (plan.piece_size - 1)) != 0) {
        throw IngestError("piece size " + std::to_string(plan.piece_size) +
                          " must be a power of two of at least 16 KiB");
    }
    if (config.tier && plan.block_size % plan.piece_size != 0) {
        if (opt.block_size || config.block_size) {
            throw IngestError(
                "block size " + std::to_string(plan.block_size) + " is not a multiple of the piece size " +
                std::to_string(plan.piece_size) +
                ": on a tier each piece must lie in one block, so that it has one pair of nodes");
        }
        plan.block_size = tier_block_size(plan.block_size, plan.piece_size);
    }
}

IngestPlan check_ingest(const ServerConfig& config, const IngestOptions& opt) {
    if (!is_valid_title_name(opt.name)) {
        throw IngestError("invalid title name \"" + opt.name +
                          "\": use 1-128 of A-Z a-z 0-9 . _ - and do not start with '.'");
    }
    IngestPlan plan;
    stat_media(opt.media, plan);
    plan.torrent_dir = opt.torrent.parent_path().empty() ? fs::path(".") : opt.torrent.parent_path();
    std::error_code ec;
    if (!opt.torrent.empty() && !fs::is_directory(plan.torrent_dir, ec)) {
        throw IngestError("cannot write torrent " + opt.torrent.string() + ": directory " +
                          plan.torrent_dir.string() + " does not exist");
    }
    plan.policy = opt.policy.value_or(config.policy);
    if (auto problem = placement_problem(plan.policy, config.disks.size()); !problem.empty()) {
        throw IngestError("policy " + std::string(to_string(plan.policy)) + ": " + problem);
    }
    if (opt.trace && plan.size > 0) plan.trace = source_trace(opt.media, plan.size, config.time_slice);
    plan.bitrate = opt.bitrate.value_or(plan.trace ? plan.trace->average_rate() : config.default_bitrate);
    if (plan.bitrate.value() == 0) throw IngestError("bitrate must be greater than 0");
    choose_sizes(config, opt, plan);
    for (const auto& url : opt.announce)
        if (!valid_announce(url))
            throw IngestError("announce URL \"" + url + "\" must start with http://, https:// or udp://");
    plan.private_torrent = opt.private_torrent.value_or(config.private_torrents);
    if (const auto ca_path = opt.peer_ca ? opt.peer_ca : config.peer_ca) {
        try {
            plan.peer_ca = read_file(*ca_path);
        } catch (const FileReadError& e) {
            throw IngestError("peer CA " + ca_path->string() + ": cannot be read (" + e.reason() + ")");
        }
        if (auto problem = check_ca_certificate(plan.peer_ca))
            throw IngestError("peer CA " + ca_path->string() + ": " + *problem);
    }
    return plan;
}

// Temporary torrents a crashed ingest left next to the --torrent target.
void remove_torrent_temporaries(const IngestOptions& opt, const fs::path& torrent_dir) {
    if (opt.torrent.empty()) return;
    const auto prefix = "." + opt.torrent.filename().string() + ".tmp.";
    std::error_code ec;
    for (fs::directory_iterator it(torrent_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
        if (it->path().filename().string().rfind(prefix, 0) == 0) fs::remove(it->path(), ec);
}

// The new version's manifest, without its blocks and torrent yet.
Manifest new_manifest(const ServerConfig& config, const IngestOptions& opt, const IngestPlan& plan,
                      const std::optional<Manifest>& previous) {
    Manifest m;
    m.title = opt.name;
    m.size = plan.size;
    m.bitrate = plan.bitrate;
    m.block_size = plan.block_size;
    m.policy = plan.policy;
    m.seed = config.placement_seed;
    m.version = new_version_id();
    m.generation = previous ? previous->generation + 1 : 1;
    // Every node of a tier ingests the same master file and must give it the same Last-Modified: the file's.
    m.created = config.tier ? plan.modified
                            : std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
    m.chunk_size = kChunkSize;
    m.trace = plan.trace;
    m.disk_ids = disk_identities(config);
    return m;
}

// The version's block directory on every disk that holds a replica; returns those disks.
std::set<std::uint32_t> create_version_dirs(const ServerConfig& config, const Placement& placement,
                                            const std::string& version_dir) {
    std::set<std::uint32_t> used_disks;
    for (const auto& r : placement.replicas)
        used_disks.insert(r.begin(), r.end());
    for (auto d : used_disks) {
        std::error_code ec;
        fs::create_directory(config.disks[d].path / version_dir, ec);
        if (ec)
            throw IngestError("cannot create " + (config.disks[d].path / version_dir).string() + ": " +
                              ec.message());
    }
    return used_disks;
}

// The torrent's piece hashes, fed the title's bytes in order.
class PieceHashes {
  public:
    explicit PieceHashes(std::uint64_t piece_size) : piece_size_(piece_size) {}
    void update(const char* data, std::uint64_t len) {
        for (std::uint64_t off = 0; off < len;) {
            const auto n = std::min(len - off, piece_size_ - fill_);
            hasher_.update({data + off, static_cast<std::ptrdiff_t>(n)});
            off += n;
            fill_ += n;
            if (fill_ == piece_size_) {
                hashes_.push_back(hasher_.final());
                hasher_.reset();
                fill_ = 0;
            }
        }
    }
    std::vector<lt::sha1_hash> finish() {
        if (fill_ > 0) hashes_.push_back(hasher_.final());
        fill_ = 0;
        return std::move(hashes_);
    }

  private:
    std::uint64_t piece_size_;
    std::uint64_t fill_ = 0;
    lt::hasher hasher_;
    std::vector<lt::sha1_hash> hashes_;
};

// What the pass over the source learnt besides the blocks it wrote.
struct SourcePass {
    std::optional<Container> container;
    std::vector<lt::sha1_hash> piece_hashes;
};

// One pass over the source: every block written to its replicas' disks (synced), its chunk checksums in
// `m`, the piece hashes computed on the way. A source that changes while being read is an error.
SourcePass write_blocks(const ServerConfig& config, const IngestOptions& opt, const IngestPlan& plan,
                        const Placement& placement, Manifest& m, IngestResult& result) {
    std::ifstream in(opt.media, std::ios::binary);
    if (!in) io_fail("cannot open media file", opt.media, errno);
    std::vector<char> buffer(plan.block_size);
    SourcePass pass;
    PieceHashes hashes(plan.piece_size);
    const auto blocks = block_count(plan.size, plan.block_size);
    for (std::uint64_t b = 0; b < blocks; ++b) {
        const auto len = block_length(b, plan.size, plan.block_size);
        in.read(buffer.data(), static_cast<std::streamsize>(len));
        if (static_cast<std::uint64_t>(in.gcount()) != len) {
            throw IngestError("media file " + opt.media.string() +
                              " changed while being read (short at block " + std::to_string(b) + ")");
        }
        if (b == 0) {
            pass.container =
                sniff_container({buffer.data(), std::min<std::size_t>(len, kContainerSniffBytes)});
            if (!pass.container) pass.container = container_from_extension(opt.media.filename().string());
        }
        BlockRecord rec;
        for (std::uint64_t off = 0; off < len; off += kChunkSize)
            rec.chunk_crcs.push_back(crc32c(buffer.data() + off, std::min(kChunkSize, len - off)));
        hashes.update(buffer.data(), len);
        for (auto d : placement.replicas[b]) {
            BlockReplica rep{d, block_file_name(m.title, m.version, b)};
            write_block_file(config.disks[d].path / rep.file, buffer.data(), len);
            rec.replicas.push_back(std::move(rep));
            ++result.blocks_per_disk[d];
        }
        m.blocks.push_back(std::move(rec));
    }
    if (in.peek() != std::char_traits<char>::eof()) {
        throw IngestError("media file " + opt.media.string() + " grew while being read");
    }
    pass.piece_hashes = hashes.finish();
    return pass;
}

// The title's torrent, recorded in `m`. A torrent cannot describe zero bytes (BitTorrent has no zero-piece
// torrent, libtorrent refuses one): an empty title is served over HTTP only, and has no torrent.
TorrentFile make_torrent(const ServerConfig& config, const IngestOptions& opt, const IngestPlan& plan,
                         SourcePass pass, Manifest& m) {
    const auto& tier = config.tier;
    if (tier) {
        m.tier = ManifestTier{tier->layout, tier->self_node().id,
                              content_id(plan.size, plan.piece_size, pass.piece_hashes)};
    }
    if (plan.size == 0) return {};
    TorrentSpec spec;
    spec.title = m.title;
    spec.file_name = title_file_name(m.title, pass.container);
    spec.size = plan.size;
    spec.piece_size = plan.piece_size;
    spec.piece_hashes = std::move(pass.piece_hashes);
    spec.announce = opt.announce;
    for (const auto& peer : opt.operator_peers)
        spec.operator_peers.push_back(peer.to_string());
    if (tier) {
        for (const auto& node : tier->layout.nodes)
            spec.web_seeds.push_back(node.url + "/titles/" + m.title);
        spec.tier = tier->layout;
        spec.block_size = plan.block_size;
    } else {
        spec.web_seeds.push_back(config.public_url + "/titles/" + m.title);
    }
    spec.private_torrent = plan.private_torrent;
    spec.ssl_ca = plan.peer_ca;
    spec.bitrate = plan.bitrate;
    if (plan.trace) {
        spec.average_bitrate = plan.trace->average_rate();
        spec.peak_bitrate = plan.trace->peak_rate();
    }
    TorrentFile torrent;
    try {
        torrent = make_title_torrent(spec);
    } catch (const std::exception& e) {
        throw IngestError(std::string("cannot create the torrent: ") + e.what());
    }
    m.torrent = TorrentRecord{torrent_file_path(m.title, m.version), spec.file_name, torrent.info_hash};
    return torrent;
}

// Stages every file, then commits: the store's copies of the torrent are in place before any manifest
// names them, so an ingest that stops before the commit leaves only orphans, which the next one removes.
void commit_version(const ServerConfig& config, const IngestOptions& opt, const Manifest& m,
                    const TorrentFile& torrent) {
    std::vector<StagedFile> manifests;
    const auto text = manifest_to_json(m).dump();
    try {
        if (m.torrent) {
            for (const auto& disk : config.disks)
                write_file_atomically(disk.path / m.torrent->file, torrent.bytes);
            for (const auto& disk : config.disks)
                fsync_directory(disk.path / "torrents");
        }
        for (const auto& disk : config.disks)
            manifests.emplace_back(manifest_path(disk.path, m.title), text);
        std::optional<StagedFile> staged_torrent;
        if (m.torrent && !opt.torrent.empty()) staged_torrent.emplace(opt.torrent, torrent.bytes);
        for (auto& f : manifests)
            f.commit();
        if (staged_torrent) staged_torrent->commit();
        // A torrent left there would describe an older version.
        std::error_code ec;
        if (!m.torrent && !opt.torrent.empty()) fs::remove(opt.torrent, ec);
    } catch (const std::runtime_error& e) {
        throw IngestError(e.what());
    }
}

}  // namespace

IngestResult ingest_title(const ServerConfig& config, const IngestOptions& opt) {
    const auto plan = check_ingest(config, opt);

    prepare_disks(config);
    FileLock lock(ingest_lock_path(config.disks.front().path));
    clean_up_locked(config);
    remove_torrent_temporaries(opt, plan.torrent_dir);

    Catalogue catalogue(disk_paths(config));
    auto scan = catalogue.scan();
    std::optional<Manifest> previous;
    if (auto it = scan.titles.find(opt.name); it != scan.titles.end()) previous = it->second.manifest;
    Manifest m = new_manifest(config, opt, plan, previous);
    const auto blocks = block_count(plan.size, plan.block_size);
    auto placement = place_blocks(plan.policy, blocks, config.disks.size(), m.seed, m.title);

    IngestResult result;
    result.blocks_per_disk.assign(config.disks.size(), 0);
    result.held_blocks = blocks;
    // On a tier this node writes only its share; a block keeps the disks placement gave it whichever nodes
    // hold it, so a node's layout of a block does not depend on the other nodes.
    if (const auto& tier = config.tier) {
        result.held_blocks = 0;
        for (std::uint64_t b = 0; b < blocks; ++b) {
            const auto holders = tier->layout.holders(m.title, b);
            if (std::find(holders.begin(), holders.end(), tier->self) == holders.end())
                placement.replicas[b].clear();
            else
                ++result.held_blocks;
        }
    }
    const auto version_dir = version_dir_name(m.title, m.version);
    const auto used_disks = create_version_dirs(config, placement, version_dir);
    auto pass = write_blocks(config, opt, plan, placement, m, result);
    for (auto d : used_disks) {
        fsync_directory(config.disks[d].path / version_dir);
        fsync_directory(config.disks[d].path / "blocks");
    }
    const auto torrent = make_torrent(config, opt, plan, std::move(pass), m);
    result.info_hash = torrent.info_hash;

    commit_version(config, opt, m, torrent);
    result.removed_versions = drop_old_versions(config, m, version_dir);
    result.manifest = std::move(m);
    return result;
}

}  // namespace toast::server
