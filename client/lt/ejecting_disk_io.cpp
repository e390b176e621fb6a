#include "client/lt/ejecting_disk_io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <map>

#include <boost/asio/post.hpp>
#include <libtorrent/file_storage.hpp>
#include <libtorrent/mmap_disk_io.hpp>
#include <libtorrent/peer_request.hpp>
#include <libtorrent/posix_disk_io.hpp>
#include <libtorrent/session.hpp>

namespace lt = libtorrent;

namespace toast::client {

namespace {

// boost::system::error_category has a protected non-virtual destructor by design (categories are static).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wnon-virtual-dtor"
class EjectionCategory final : public boost::system::error_category {
  public:
    const char* name() const noexcept override { return "toast.ejection"; }
    std::string message(int) const override { return "piece was ejected from the bounded local buffer"; }
};
#pragma GCC diagnostic pop

lt::storage_error ejected_error() {
    return lt::storage_error(lt::error_code(1, ejection_category()), lt::operation_t::file_read);
}

// Forwards everything to libtorrent's disk I/O; only reads of governed storages are filtered.
class EjectingDiskIo final : public lt::disk_interface {
  public:
    EjectingDiskIo(lt::io_context& ios, std::unique_ptr<lt::disk_interface> inner,
                   std::shared_ptr<EjectionRegistries> registries)
        : ios_(ios), inner_(std::move(inner)), registries_(std::move(registries)) {}

    lt::storage_holder new_torrent(const lt::storage_params& p,
                                   const std::shared_ptr<void>& torrent) override {
        lt::storage_holder inner = inner_->new_torrent(p, torrent);
        lt::storage_index_t index = inner;
        if (auto registry = registries_->find(p.info_hash)) {
            registry->set_layout(p.mapped_files != nullptr ? *p.mapped_files : p.files, p.path);
            governed_[index] = std::move(registry);
        }
        holders_.emplace(index, std::move(inner));
        return lt::storage_holder(index, *this);
    }
    void remove_torrent(lt::storage_index_t index) override {
        governed_.erase(index);
        holders_.erase(index);  // the inner holder removes it from the inner disk I/O
    }

    void async_read(lt::storage_index_t storage, const lt::peer_request& r,
                    std::function<void(lt::disk_buffer_holder, const lt::storage_error&)> handler,
                    lt::disk_job_flags_t flags) override {
        auto governed = governed_.find(storage);
        if (governed == governed_.end()) {
            inner_->async_read(storage, r, std::move(handler), flags);
            return;
        }
        auto registry = governed->second;
        PieceIndex piece(static_cast<int>(r.piece));
        if (registry->is_ejected(piece)) {
            registry->count_refused_read();
            // Never call back from inside async_read: the peer connection is still in the middle of its call.
            boost::asio::post(ios_,
                              [h = std::move(handler)] { h(lt::disk_buffer_holder(), ejected_error()); });
            return;
        }
        inner_->async_read(
            storage, r,
            [registry, piece, h = std::move(handler)](lt::disk_buffer_holder buffer,
                                                      const lt::storage_error& error) {
                // Ejected while the read was in flight: its bytes may already be a punched hole.
                if (!error && registry->is_ejected(piece)) {
                    registry->count_refused_read();
                    h(lt::disk_buffer_holder(), ejected_error());
                    return;
                }
                h(std::move(buffer), error);
            },
            flags);
    }

    bool async_write(lt::storage_index_t storage, const lt::peer_request& r, const char* buf,
                     std::shared_ptr<lt::disk_observer> o,
                     std::function<void(const lt::storage_error&)> handler,
                     lt::disk_job_flags_t flags) override {
        return inner_->async_write(storage, r, buf, std::move(o), std::move(handler), flags);
    }
    void async_hash(lt::storage_index_t storage, lt::piece_index_t piece, lt::span<lt::sha256_hash> v2,
                    lt::disk_job_flags_t flags,
                    std::function<void(lt::piece_index_t, const lt::sha1_hash&, const lt::storage_error&)>
                        handler) override {
        inner_->async_hash(storage, piece, v2, flags, std::move(handler));
    }
    void async_hash2(lt::storage_index_t storage, lt::piece_index_t piece, int offset,
                     lt::disk_job_flags_t flags,
                     std::function<void(lt::piece_index_t, const lt::sha256_hash&, const lt::storage_error&)>
                         handler) override {
        inner_->async_hash2(storage, piece, offset, flags, std::move(handler));
    }
    void async_move_storage(
        lt::storage_index_t storage, std::string p, lt::move_flags_t flags,
        std::function<void(lt::status_t, const std::string&, const lt::storage_error&)> handler) override {
        inner_->async_move_storage(storage, std::move(p), flags, std::move(handler));
    }
    void async_release_files(lt::storage_index_t storage, std::function<void()> handler) override {
        inner_->async_release_files(storage, std::move(handler));
    }
    void async_check_files(lt::storage_index_t storage, const lt::add_torrent_params* resume_data,
                           lt::aux::vector<std::string, lt::file_index_t> links,
                           std::function<void(lt::status_t, const lt::storage_error&)> handler) override {
        inner_->async_check_files(storage, resume_data, std::move(links), std::move(handler));
    }
    void async_stop_torrent(lt::storage_index_t storage, std::function<void()> handler) override {
        inner_->async_stop_torrent(storage, std::move(handler));
    }
    void async_rename_file(lt::storage_index_t storage, lt::file_index_t index, std::string name,
                           std::function<void(const std::string&, lt::file_index_t, const lt::storage_error&)>
                               handler) override {
        inner_->async_rename_file(storage, index, std::move(name), std::move(handler));
    }
    void async_delete_files(lt::storage_index_t storage, lt::remove_flags_t options,
                            std::function<void(const lt::storage_error&)> handler) override {
        inner_->async_delete_files(storage, options, std::move(handler));
    }
    void async_set_file_priority(
        lt::storage_index_t storage, lt::aux::vector<lt::download_priority_t, lt::file_index_t> prio,
        std::function<void(const lt::storage_error&,
                           lt::aux::vector<lt::download_priority_t, lt::file_index_t>)>
            handler) override {
        inner_->async_set_file_priority(storage, std::move(prio), std::move(handler));
    }
    void async_clear_piece(lt::storage_index_t storage, lt::piece_index_t index,
                           std::function<void(lt::piece_index_t)> handler) override {
        inner_->async_clear_piece(storage, index, std::move(handler));
    }
    void update_stats_counters(lt::counters& c) const override { inner_->update_stats_counters(c); }
    std::vector<lt::open_file_state> get_status(lt::storage_index_t storage) const override {
        return inner_->get_status(storage);
    }
    void abort(bool wait) override { inner_->abort(wait); }
    void submit_jobs() override { inner_->submit_jobs(); }
    void settings_updated() override { inner_->settings_updated(); }

  private:
    lt::io_context& ios_;
    std::unique_ptr<lt::disk_interface> inner_;
    std::shared_ptr<EjectionRegistries> registries_;
    std::map<lt::storage_index_t, lt::storage_holder> holders_;                  // network thread only
    std::map<lt::storage_index_t, std::shared_ptr<EjectionRegistry>> governed_;  // network thread only
};

}  // namespace

const boost::system::error_category& ejection_category() {
    static const EjectionCategory category;
    return category;
}

void EjectionRegistry::set_layout(const lt::file_storage& files, const std::string& save_path) {
    std::lock_guard lock(mutex_);
    files_ = std::make_shared<const lt::file_storage>(files);
    save_path_ = save_path;
}

std::vector<EjectionRegistry::Extent> EjectionRegistry::extents_of(PieceIndex piece) const {
    std::vector<Extent> out;
    if (!files_ || piece.value() < 0 || piece.value() >= files_->num_pieces()) return out;
    lt::piece_index_t index(piece.value());
    for (const auto& slice : files_->map_block(index, 0, files_->piece_size(index))) {
        if (files_->pad_file_at(slice.file_index)) continue;
        out.push_back({files_->file_path(slice.file_index, save_path_), slice.offset, slice.size});
    }
    return out;
}

std::uint64_t EjectionRegistry::eject(PieceIndex piece) {
    std::vector<Extent> extents;
    {
        std::lock_guard lock(mutex_);
        if (!ejected_.insert(piece).second) return 0;
        extents = extents_of(piece);
    }
    // Marked first, punched second: a read that completes after this point is refused by the wrapper.
    std::uint64_t freed = 0;
    for (const auto& e : extents) {
        int fd = ::open(e.file.c_str(), O_RDWR | O_CLOEXEC);
        if (fd < 0) continue;
        if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, e.offset, e.size) == 0) {
            freed += static_cast<std::uint64_t>(e.size);
        }
        ::close(fd);
    }
    return freed;
}

bool EjectionRegistry::is_ejected(PieceIndex piece) const {
    std::lock_guard lock(mutex_);
    return ejected_.count(piece) > 0;
}

std::size_t EjectionRegistry::ejected_count() const {
    std::lock_guard lock(mutex_);
    return ejected_.size();
}

std::shared_ptr<EjectionRegistry> EjectionRegistries::add(const lt::sha1_hash& info_hash) {
    std::lock_guard lock(mutex_);
    auto& r = registries_[info_hash];
    if (!r) r = std::make_shared<EjectionRegistry>();
    return r;
}

void EjectionRegistries::remove(const lt::sha1_hash& info_hash) {
    std::lock_guard lock(mutex_);
    registries_.erase(info_hash);
}

std::shared_ptr<EjectionRegistry> EjectionRegistries::find(const lt::sha1_hash& info_hash) const {
    std::lock_guard lock(mutex_);
    auto it = registries_.find(info_hash);
    return it == registries_.end() ? nullptr : it->second;
}

lt::disk_io_constructor_type make_ejecting_disk_io(std::shared_ptr<EjectionRegistries> registries,
                                                   DiskIoKind kind) {
    return [registries, kind](lt::io_context& ios, const lt::settings_interface& settings,
                              lt::counters& counters) {
        auto inner = kind == DiskIoKind::mmap ? lt::mmap_disk_io_constructor(ios, settings, counters)
                                              : lt::posix_disk_io_constructor(ios, settings, counters);
        return std::unique_ptr<lt::disk_interface>(new EjectingDiskIo(ios, std::move(inner), registries));
    };
}

}  // namespace toast::client
