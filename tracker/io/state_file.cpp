#include "tracker/io/state_file.hpp"

#include <cerrno>
#include <system_error>
#include <utility>

#include "toast/common/durable_file.hpp"
#include "toast/common/read_file.hpp"

namespace toast::tracker {
namespace {

std::string reason(int error) {
    return std::system_category().message(error);
}

}  // namespace

Result<StateFileContent, std::string> read_state_file(const std::filesystem::path& path) {
    try {
        return StateFileContent{true, read_file(path)};
    } catch (const FileReadError& e) {
        if (e.missing()) return StateFileContent{};
        return "cannot read state file '" + path.string() + "': " + e.reason();
    }
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
