// One HTTP/1.1 connection: reads requests (pipelined, bounded queue), answers them in order through
// handle_request(), and sends title bytes straight from the store's files with sendfile(2).
// Everything runs on the connection's strand; store completions are posted back to it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/core/pacer.hpp"
#include "server/core/request_handler.hpp"
#include "server/http/server_shared.hpp"

namespace toast::server {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
  public:
    using Clock = std::chrono::steady_clock;

    // `counted`: the session holds one of max_connections. `reject`: answer 503 at once and close.
    HttpSession(ServerShared& shared, boost::asio::ip::tcp::socket socket, bool admin_listener, bool counted,
                bool reject);
    void start();
    // Thread-safe: finish what is queued, read nothing more, close.
    void drain();

  private:
    struct Job {
        HttpResponse response;
        bool keep_alive = false;
        Clock::time_point received;
        std::string what;  // "GET /titles/x" for log lines (sanitised)
    };
    // One step of a response body: literal framing bytes, or a window of title bytes read from the store.
    struct Item {
        bool literal = false;
        std::size_t part = 0;  // index into response.parts; npos means the trailer
        std::uint64_t offset = 0;
        std::uint64_t length = 0;
        bool slice_start = false;  // paced: wait for the pacer before sending this
        bool slice_end = false;    // paced: a transmission ends after this
    };
    struct Slot {
        std::size_t item = 0;
        bool ready = false;
        ReadResult result;
    };
    // Bytes waiting for the socket: memory (fd < 0) or a file region.
    struct Chunk {
        const char* data = nullptr;
        std::uint64_t size = 0;
        int fd = -1;
        std::uint64_t offset = 0;
        std::shared_ptr<const void> keeper;
    };

    void do_read();
    void on_read(boost::beast::error_code ec);
    void enqueue(Job job);
    void start_response();
    void plan_items(const HttpResponse& r);
    void issue_reads();
    void on_store_read(std::uint64_t generation, std::size_t item, ReadResult result);
    void pump();
    bool append_window(const Item& item, ReadResult& result);
    void fail_before_head(ReadStatus status, const std::string& message, const Item& item);
    void commit_head();
    void flush();
    void on_flushed();
    void finish_response();
    void reset_transfer();
    void linger_close();
    void linger_read();
    void close();
    void arm_watchdog(Clock::duration d);
    void on_watchdog();
    void log_response(const Job& job) const;

    ServerShared& shared_;
    boost::asio::ip::tcp::socket socket_;
    boost::asio::steady_timer watchdog_;
    boost::asio::steady_timer pace_timer_;
    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    bool admin_listener_;
    bool counted_;
    bool reject_;
    bool loopback_ = false;
    std::string peer_;

    std::deque<Job> queue_;
    bool reading_ = false;
    bool responding_ = false;
    bool close_after_ = false;
    bool closed_ = false;
    bool lingering_ = false;
    Clock::time_point last_activity_;

    // The response at the front of the queue.
    std::uint64_t generation_ = 0;
    std::vector<Item> items_;
    std::size_t next_item_ = 0;
    std::size_t next_fetch_ = 0;
    std::deque<Slot> slots_;
    std::string head_;
    bool head_sent_ = false;
    std::uint64_t head_left_ = 0;
    std::uint64_t body_sent_ = 0;
    std::optional<Pacer> pacer_;
    Clock::time_point next_slice_at_;
    Clock::time_point slice_started_at_;
    bool slice_done_pending_ = false;
    bool pacing_wait_ = false;

    std::deque<Chunk> out_;
    bool flushing_ = false;
    std::array<char, 4096> discard_{};
};

}  // namespace toast::server
