#include "toast/common/read_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace toast {

FileReadError::FileReadError(const std::filesystem::path& path, std::error_code code,
                             const std::string& reason)
    : std::runtime_error("cannot read '" + path.string() + "': " + reason), code_(code), reason_(reason) {}

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, int err) {
    const std::error_code code(err, std::system_category());
    throw FileReadError(path, code, code.message());
}

}  // namespace

std::string read_file(const std::filesystem::path& path) {
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) fail(path, errno);
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) fail(path, errno);
    if (S_ISDIR(st.st_mode))
        throw FileReadError(path, std::make_error_code(std::errc::is_a_directory), "is a directory");
    if (!S_ISREG(st.st_mode))
        throw FileReadError(path, std::make_error_code(std::errc::invalid_argument), "not a regular file");
    std::string out;
    out.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail(path, errno);
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

}  // namespace toast
