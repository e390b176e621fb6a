// A small HTTP/1.1 server for fallback tests: serves one byte buffer with single byte ranges, keeps
// connections alive, and misbehaves on request (corrupt the first N answers, fail the first N with 500,
// delay every answer, refuse one range, refuse everything as overloaded). Runs on its own thread; stop()
// closes everything and start() listens again on the same port, so a test can take "the server" away and
// bring it back.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace toast::client::testing {

class RangeServer {
  public:
    RangeServer(std::string path, std::vector<char> data, std::uint16_t port = 0);
    ~RangeServer();
    RangeServer(const RangeServer&) = delete;
    RangeServer& operator=(const RangeServer&) = delete;

    void start();
    void stop();
    std::uint16_t port() const { return port_; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + path_; }

    std::atomic<int> corrupt_first{0};  // answers whose body gets one byte flipped
    std::atomic<int> fail_first{0};     // answers replaced by 500
    std::atomic<int> delay_ms{0};       // added before every answer
    std::atomic<int> late_first{0};     // answers marked Toast-Late (served after the request's deadline)
    // A range starting at this offset is answered 503 without Retry-After (a block the server cannot read);
    // -1: none.
    std::atomic<std::int64_t> refuse_offset{-1};
    // With refuse_offset: the 503 names the bytes [refuse_offset, this] as lost (Toast-Unavailable); -1: not.
    std::atomic<std::int64_t> refuse_last{-1};
    std::atomic<int> busy_first{0};  // answers replaced by 503 with Retry-After: 1 (an overloaded server)
    // A node of a tier: every answer carries Toast-Load with this many milliseconds (-1: none); with
    // `not_holder`, a Toast-Direct request is answered 307 (the node does not hold the block).
    std::atomic<int> load_ms{-1};
    std::atomic<bool> not_holder{false};
    std::atomic<int> direct_requests{0};  // requests that carried Toast-Direct: 1
    std::atomic<int> requests{0};
    std::atomic<int> connections{0};
    std::atomic<std::uint64_t> body_bytes{0};
    // Each request's Range and Toast-Deadline header ("" when absent), in arrival order.
    std::vector<std::pair<std::string, std::string>> deadlines() const;
    void record_deadline(std::string range, std::string deadline);

    struct State;  // the server thread's io_context, acceptor and sockets

  private:
    mutable std::mutex seen_mutex_;
    std::vector<std::pair<std::string, std::string>> deadlines_;
    std::string path_;
    std::vector<char> data_;
    std::uint16_t port_;
    std::shared_ptr<State> state_;
    std::thread thread_;
};

}  // namespace toast::client::testing
