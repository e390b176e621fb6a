// Reading a whole file, with an error that says why it could not be read. A std::ifstream opens a directory
// without complaint and then reads nothing, so a whitelist naming a directory would load as an empty one and
// a config naming one would be "not valid JSON"; and it would block forever on a FIFO.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace toast {

// what(): "cannot read 'PATH': REASON". code(): the system's error (no_such_file_or_directory when the file
// does not exist, is_a_directory, invalid_argument for anything else that is not a regular file).
class FileReadError : public std::runtime_error {
  public:
    FileReadError(const std::filesystem::path& path, std::error_code code, const std::string& reason);
    std::error_code code() const { return code_; }
    const std::string& reason() const { return reason_; }  // "No such file or directory", "is a directory"
    bool missing() const { return code_ == std::errc::no_such_file_or_directory; }

  private:
    std::error_code code_;
    std::string reason_;
};

// The bytes of the regular file at `path`. Throws FileReadError.
std::string read_file(const std::filesystem::path& path);

}  // namespace toast
