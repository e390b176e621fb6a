#include "toast/common/durable_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace toast {

namespace {

// what(): "<what> <path>: <the system's reason>"; code() keeps the errno for callers that word it themselves.
[[noreturn]] void fail(const std::string& what, const std::filesystem::path& path, int err) {
    throw std::system_error(err, std::system_category(), what + " " + path.string());
}

}  // namespace

std::filesystem::path temporary_name_for(const std::filesystem::path& target) {
    static std::atomic<unsigned> counter{0};
    // Built by appending: GCC 12 warns (-Wrestrict, a false positive) on "." + std::string here.
    std::string name(1, '.');
    name += target.filename().string();
    name += ".tmp.";
    name += std::to_string(::getpid());
    name += '.';
    name += std::to_string(counter.fetch_add(1));
    return target.parent_path() / name;
}

bool is_temporary_name(std::string_view file_name) {
    return !file_name.empty() && file_name.front() == '.' &&
           file_name.find(".tmp.") != std::string_view::npos;
}

void fsync_directory(const std::filesystem::path& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) fail("cannot open directory", dir, errno);
    int rc = ::fsync(fd);
    int err = errno;
    ::close(fd);
    if (rc != 0) fail("cannot fsync directory", dir, err);
}

namespace {

// Writes and fsyncs `data` to a new file `tmp`; on failure removes it and throws.
void write_new_file(const std::filesystem::path& tmp, std::string_view data, unsigned mode = 0644) {
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, static_cast<mode_t>(mode));
    if (fd < 0) fail("cannot create", tmp, errno);
    auto abandon = [&](const char* what, int err) {
        ::close(fd);
        ::unlink(tmp.c_str());
        fail(what, tmp, err);
    };
    std::size_t done = 0;
    while (done < data.size()) {
        auto n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            abandon("cannot write", errno);
        }
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) abandon("cannot fsync", errno);
    if (::close(fd) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        fail("cannot close", tmp, err);
    }
}

}  // namespace

void write_file_atomically(const std::filesystem::path& target, std::string_view data, unsigned mode) {
    auto tmp = temporary_name_for(target);
    write_new_file(tmp, data, mode);
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        int err = errno;
        ::unlink(tmp.c_str());
        fail("cannot rename into place", target, err);
    }
    fsync_directory(target.parent_path().empty() ? "." : target.parent_path());
}

StagedFile::StagedFile(std::filesystem::path target, std::string_view data)
    : target_(std::move(target)), temp_(temporary_name_for(target_)) {
    write_new_file(temp_, data);
}

StagedFile::StagedFile(StagedFile&& other) noexcept
    : target_(std::move(other.target_)), temp_(std::exchange(other.temp_, {})) {}

StagedFile::~StagedFile() {
    if (!temp_.empty()) ::unlink(temp_.c_str());
}

void StagedFile::commit() {
    if (::rename(temp_.c_str(), target_.c_str()) != 0) fail("cannot rename into place", target_, errno);
    temp_.clear();
    fsync_directory(target_.parent_path().empty() ? "." : target_.parent_path());
}

FileLock::FileLock(const std::filesystem::path& path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot open lock file", path, errno);
    while (::flock(fd_, LOCK_EX) != 0) {
        if (errno == EINTR) continue;
        int err = errno;
        ::close(fd_);
        fail("cannot lock", path, err);
    }
}

FileLock::~FileLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the flock
}

}  // namespace toast
