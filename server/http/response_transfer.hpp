// One response on its way to the socket: its head, then (for title bodies) the planned body items, whose
// title bytes are read from the store ahead of sending (at most `read_ahead` windows outstanding) and, for
// /stream, released slice by slice by the pacer. It decides what goes on the wire next; the session does the
// I/O (store reads, the pacing timer, socket writes) and reports back. No sockets and no timers: it is tested
// by feeding it events.
//
// The head of a title body is committed only once the first window of title bytes is in hand, so a store
// failure before that becomes a clean 503/500 instead of a cut-off 200.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "server/core/body_plan.hpp"
#include "server/core/pacer.hpp"
#include "server/core/request_handler.hpp"
#include "server/core/title_store.hpp"
#include "server/http/send_chain.hpp"

namespace toast::server {

class ResponseTransfer {
  public:
    using Clock = std::chrono::steady_clock;

    struct Limits {
        std::uint64_t window = 4 * 1024 * 1024;  // largest store read
        std::size_t read_ahead = 2;              // windows read or being read but not yet sent
        std::chrono::nanoseconds time_slice{std::chrono::seconds(5)};  // t_b, for paced responses
    };

    struct StoreRead {
        std::size_t item = 0;
        std::uint64_t offset = 0;
        std::uint64_t length = 0;
    };

    enum class Step {
        send,        // `out` has bytes: send them, report with on_sent(), call next() once `out` is empty
        wait_store,  // nothing to send until on_store_read()
        wait_pacer,  // nothing to send before pacer_wakeup()
        done,        // every byte of the response is sent
        failed,      // a store read failed: see failure(); close the connection if head_committed()
    };

    struct Failure {
        ReadStatus status = ReadStatus::io_error;
        std::string message;  // names the title and the byte range
        std::optional<std::pair<std::uint64_t, std::uint64_t>> unavailable_block;  // ReadResult's
    };

    // `response` must outlive the transfer: literal bytes are sent from it. `head` is its serialized head.
    ResponseTransfer(const HttpResponse& response, std::string head, const Limits& limits);

    // Store reads to issue now; each is answered with on_store_read(item, result).
    std::vector<StoreRead> take_reads();
    void on_store_read(std::size_t item, ReadResult result);

    // Appends to `out` (empty) what may be sent at `now`.
    Step next(SendChain& out, Clock::time_point now);
    // How many of `n` bytes just written belong to the body (the rest were head bytes).
    std::uint64_t on_sent(std::uint64_t n);

    bool head_committed() const { return head_committed_; }
    Clock::time_point pacer_wakeup() const { return next_slice_at_; }
    const Failure& failure() const { return failure_; }
    // True while the transfer waits for the store (not for the peer): the idle watchdog does not count it.
    bool waiting_on_server() const { return waiting_on_server_; }

  private:
    struct Slot {
        std::size_t item = 0;
        bool ready = false;
        ReadResult result;
    };

    Step fail_with(const BodyItem& item, const ReadResult& result, const std::string& why);
    // Empty when `result` holds exactly the item's bytes, else what is wrong.
    static std::string window_problem(const BodyItem& item, const ReadResult& result);
    static void append_window(const ReadResult& result, SendChain& out);
    void commit_head(SendChain& out);

    const HttpResponse& response_;
    std::string head_;
    Limits limits_;
    bool planned_ = false;
    std::vector<BodyItem> items_;
    std::size_t next_item_ = 0;   // next item to append to the chain
    std::size_t next_fetch_ = 0;  // next item to consider for a store read
    std::deque<Slot> slots_;
    bool head_committed_ = false;
    std::uint64_t head_left_ = 0;  // head bytes not yet reported sent
    std::optional<Pacer> pacer_;
    Clock::time_point next_slice_at_{};
    Clock::time_point slice_started_at_{};
    bool slice_in_flight_ = false;  // a paced transmission ends when `out` next runs empty
    bool finished_ = false;
    bool waiting_on_server_ = false;
    Failure failure_;
};

}  // namespace toast::server
