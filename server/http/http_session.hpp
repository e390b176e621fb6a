// One HTTP/1.1 connection. It reads requests (pipelined: at most max_pipelined waiting), answers them in
// order through handle_request(), and hands each answer to a ResponseTransfer, which says what to send next;
// bytes go out through the send chain (sendfile(2) for title bytes). A session lives on one io_context, run
// by one thread, so it needs no strand; store completions are posted back to it.
//
// With TLS (the config's "tls", main listener only) it first completes the handshake within idle_timeout;
// requests are then read through the SSL stream, and responses written through it: file regions are read
// into memory and encrypted (SSL writes, never sendfile), a quarter MiB at a time.
//
// Its life is a few states:
//   idle            no response in progress; waiting for (or reading) the next request
//   awaiting_store  the front response waits for store reads      } "responding": a response is in progress;
//   pacing          the front response waits for its next slice   } further requests may be read meanwhile
//   writing         the front response waits for the socket      }
//   lingering       every response sent and the send side shut; discarding input for a moment, so that
//                   closing with unread input does not reset the connection under the last response
//   closed
// and one fact about input: once it has ended (the peer closed, a request said Connection: close or could not
// be parsed, or the server is draining) no further request is read, and the connection lingers and closes
// after the queued responses.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/core/request_handler.hpp"
#include "server/http/response_transfer.hpp"
#include "server/http/send_chain.hpp"
#include "server/http/server_shared.hpp"

namespace toast::server {

class HttpSession : public std::enable_shared_from_this<HttpSession> {
  public:
    using Clock = std::chrono::steady_clock;

    // `counted`: the session holds one of max_connections. `reject`: answer 503 at once and close.
    HttpSession(ServerShared& shared, boost::asio::ip::tcp::socket socket, bool admin_listener, bool counted,
                bool reject);
    void start();
    boost::asio::any_io_executor executor() { return socket_.get_executor(); }
    // Thread-safe: finish what is queued, read nothing more, close.
    void drain();

  private:
    enum class State { idle, awaiting_store, pacing, writing, lingering, closed };

    // What the access log shows of a request, copied before the parser is reused.
    struct AccessRecord {
        std::chrono::system_clock::time_point received;
        std::string request_line;
        std::string referer;
        std::string user_agent;
        std::string range;
    };

    struct Job {
        HttpResponse response;
        bool keep_alive = false;
        Clock::time_point received;
        std::string what;                                    // "GET /titles/x" for log lines (escaped)
        std::shared_ptr<StreamAdmission::Ticket> admission;  // an admitted stream's reservations
        std::optional<Clock::time_point> start_at;           // an admitted stream starts no earlier
        std::optional<AccessRecord> access;                  // set while an access log is configured
        std::uint64_t body_sent = 0;
    };

    // TLS.
    void on_handshake(boost::beast::error_code ec);
    void begin();  // after the handshake (or at once without TLS): read, or refuse the connection
    void write_tls();
    void on_tls_written(boost::beast::error_code ec, std::size_t n);

    // Reading requests.
    void do_read();
    void on_read(boost::beast::error_code ec);
    void end_input();
    void enqueue(Job job);
    bool queue_full() const { return queue_.size() >= shared_.settings()->max_pipelined; }

    // Responding.
    void admit(Job& job, std::string_view target);
    void start_response();
    void pump();
    void issue_reads();
    void on_store_read(std::uint64_t generation, std::size_t item, ReadResult result);
    void write();
    void on_transfer_failed();
    void finish_response();
    void count_bytes(std::uint64_t body_bytes);

    // Closing.
    void linger_close();
    void linger_read();
    void close();
    void arm_watchdog(Clock::duration d);
    void on_watchdog();
    void log_response(const Job& job) const;
    void write_access_log(const Job& job) const;

    ServerShared& shared_;
    boost::asio::ip::tcp::socket socket_;
    std::shared_ptr<boost::asio::ssl::context> tls_context_;  // null: plain HTTP
    std::optional<boost::asio::ssl::stream<boost::asio::ip::tcp::socket&>> tls_;
    std::string tls_out_;  // bytes being written through the SSL stream
    boost::asio::steady_timer watchdog_;
    boost::asio::steady_timer pace_timer_;
    boost::beast::flat_buffer buffer_;
    std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
    const bool admin_listener_;
    const bool counted_;
    const bool reject_;
    bool loopback_ = false;
    std::string peer_address_;
    std::string peer_;              // address:port, for log lines
    std::size_t header_limit_ = 0;  // of the request being read

    State state_ = State::idle;
    bool input_ended_ = false;
    bool read_in_flight_ = false;  // an async read (of a request, or of input to discard) is outstanding
    Clock::time_point last_activity_;

    std::deque<Job> queue_;  // the front is the response in progress
    std::optional<ResponseTransfer> transfer_;
    std::uint64_t generation_ = 0;  // bumped per transfer: late store completions and timers are ignored
    SendChain out_;
    Counter* bytes_counter_ = nullptr;  // toast_http_bytes_sent_total of the current response's title
    std::string bytes_counter_title_;

    std::array<char, 4096> discard_{};
};

}  // namespace toast::server
