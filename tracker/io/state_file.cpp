#include "tracker/io/state_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

#include "toast/common/durable_file.hpp"

namespace toast::tracker {
namespace {

std::string reason(int error) {
    return std::system_category().message(error);
}

// Closes on scope exit; close errors of a file written to are checked by the writer itself.
class Fd {
  public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

  private:
    int fd_;
};

}  // namespace

Result<StateFileContent, std::string> read_state_file(const std::filesystem::path& path) {
    auto fail = [&](int error) { return "cannot read state file '" + path.string() + "': " + reason(error); };
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT) return StateFileContent{};
        return fail(errno);
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) return fail(errno);
    if (!S_ISREG(st.st_mode)) return "cannot read state file '" + path.string() + "': not a regular file";
    StateFileContent out{true, {}};
    out.bytes.reserve(static_cast<std::size_t>(st.st_size));
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(errno);
        }
        if (n == 0) break;
        out.bytes.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

std::optional<std::string> write_state_file(const std::filesystem::path& path, std::string_view bytes) {
    // The message names the state file and the reason only, not the save's temporary name (unique per
    // save): a failure that repeats (a full disk) reads the same each time and is logged once.
    try {
        // 0640 like the access log: peer addresses are not for every local user.
        write_file_atomically(path, bytes, 0640);
        return std::nullopt;
    } catch (const std::system_error& e) {
        return "cannot write state file '" + path.string() + "': " + e.code().message();
    } catch (const std::exception& e) {
        return "cannot write state file '" + path.string() + "': " + e.what();
    }
}

Result<std::filesystem::path, std::string> move_aside(const std::filesystem::path& path) {
    std::filesystem::path bad = path.string() + ".bad";
    if (::rename(path.c_str(), bad.c_str()) != 0) {
        return "cannot rename '" + path.string() + "' to '" + bad.string() + "': " + reason(errno);
    }
    return bad;
}

}  // namespace toast::tracker
