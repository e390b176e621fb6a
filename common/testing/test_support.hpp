// Helpers for integration tests: temporary directories, free ports, child processes that are always stopped,
// and a small blocking HTTP/1.1 client. Test-only; never linked into an executable.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace toast::testing {

// A fresh directory under the system temp dir, removed with everything in it on destruction.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

  private:
    std::filesystem::path path_;
};

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
std::uint16_t free_tcp_port();
std::uint16_t free_udp_port();

// True once something accepts TCP connections on 127.0.0.1:port, false after `timeout`.
bool wait_for_tcp_port(std::uint16_t port, std::chrono::milliseconds timeout);

// A child process with stdout and stderr captured to files. The destructor stops it (SIGTERM, then SIGKILL
// after a grace period) so no test leaves a process behind, whatever it asserts.
class ChildProcess {
  public:
    ChildProcess(const std::string& program, const std::vector<std::string>& args,
                 const std::filesystem::path& log_dir);
    ~ChildProcess();
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    int pid() const { return pid_; }
    bool running();
    // Sends `signal` and waits up to `timeout` for exit; returns the exit status (128+signal if killed),
    // or nullopt if it is still running.
    std::optional<int> stop(int signal, std::chrono::milliseconds timeout);
    void kill_hard();
    // Waits for it to exit by itself; nullopt on timeout.
    std::optional<int> wait(std::chrono::milliseconds timeout);
    std::string stdout_text() const;
    std::string stderr_text() const;

  private:
    int pid_ = -1;
    std::optional<int> status_;
    std::filesystem::path out_, err_;
};

// Runs a program to completion (bounded by `timeout`, killed after it) and returns exit code and output.
struct RunResult {
    int exit_code = -1;
    std::string out;
    std::string err;
    bool timed_out = false;
};
RunResult run(const std::string& program, const std::vector<std::string>& args,
              std::chrono::milliseconds timeout = std::chrono::seconds(60));

struct HttpResponse {
    int status = 0;
    std::map<std::string, std::string> headers;  // keys lower-cased
    std::string body;
    std::string header(const std::string& lower_name) const;
};

// One request on a fresh connection to 127.0.0.1:port. Throws on connection errors or after `timeout`.
HttpResponse http_request(std::uint16_t port, const std::string& method, const std::string& target,
                          const std::map<std::string, std::string>& headers = {},
                          std::chrono::milliseconds timeout = std::chrono::seconds(10));

// The same with a request body (Content-Length set).
HttpResponse http_request_with_body(std::uint16_t port, const std::string& method, const std::string& target,
                                    const std::map<std::string, std::string>& headers,
                                    const std::string& body,
                                    std::chrono::milliseconds timeout = std::chrono::seconds(10));

// A throwaway PKI made with the openssl command line in `dir`: a CA, a server certificate it signed for
// 127.0.0.1 and localhost (with its key), and another CA that signed nothing here. Valid for two days.
struct TestPki {
    std::filesystem::path ca, ca_key, other_ca, server_cert, server_key;
};
TestPki make_test_pki(const std::filesystem::path& dir);

// Sends raw bytes and returns whatever the server answers until it closes or `timeout` passes.
std::string raw_exchange(std::uint16_t port, const std::string& bytes,
                         std::chrono::milliseconds timeout = std::chrono::seconds(5));

// Writes `size` deterministic pseudo-random bytes (seeded) to `path`.
void write_random_file(const std::filesystem::path& path, std::uint64_t size, std::uint64_t seed);
std::string read_file(const std::filesystem::path& path);

}  // namespace toast::testing
