// ResponseTransfer without sockets: store results and the clock are fed in, the send chain is inspected.
#include <catch2/catch.hpp>

#include "server/http/response_transfer.hpp"

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;
using Step = ResponseTransfer::Step;
using Clock = std::chrono::steady_clock;

namespace {

std::string pattern(std::size_t n) {
    std::string s(n, '\0');
    for (std::size_t i = 0; i < n; ++i)
        s[i] = static_cast<char>('a' + i % 26);
    return s;
}

struct Title {
    std::shared_ptr<const std::string> bytes;
    std::shared_ptr<TitleInfo> info = std::make_shared<TitleInfo>();
    explicit Title(std::size_t size, BitRate rate = BitRate(8'000'000))
        : bytes(std::make_shared<const std::string>(pattern(size))) {
        info->name = "movie";
        info->size = size;
        info->bitrate = rate;
    }
    ReadResult read(std::uint64_t offset, std::uint64_t length) const {
        ReadResult r;
        r.segments.push_back(MemorySegment{bytes, offset, length});
        return r;
    }
};

HttpResponse ranged(const Title& t, std::uint64_t first, std::uint64_t last) {
    HttpResponse r;
    r.status = 206;
    r.title = t.info;
    r.parts.push_back({"", ByteRange{first, last}});
    return r;
}

// A paced whole-title /stream answer.
HttpResponse paced_whole(const Title& t) {
    HttpResponse r;
    r.status = 200;
    r.title = t.info;
    r.paced = true;
    r.parts.push_back({"", ByteRange{0, t.info->size - 1}});
    return r;
}

// Answers every read the transfer asks for from the title's bytes.
void feed_all(ResponseTransfer& t, const Title& title) {
    for (const auto& rd : t.take_reads())
        t.on_store_read(rd.item, title.read(rd.offset, rd.length));
}

// Everything in the chain as text (memory buffers only), then empties it as if sent.
std::string take(SendChain& out, ResponseTransfer& t) {
    std::string text;
    for (const auto& b : out.buffers()) {
        REQUIRE(b.fd < 0);
        text.append(b.data, b.size);
    }
    t.on_sent(out.bytes());
    out.clear();
    return text;
}

}  // namespace

TEST_CASE("a response without title bytes is its head and body in one send", "[server][http][transfer]") {
    HttpResponse r = error_response(404, "no title");
    ResponseTransfer t(r, "HEAD\r\n", {});
    SendChain out;
    CHECK(t.take_reads().empty());
    CHECK(t.next(out, Clock::now()) == Step::send);
    CHECK(t.head_committed());
    CHECK(t.on_sent(3) == 0);  // head bytes
    CHECK(t.on_sent(out.bytes() - 3) == r.body.size());
    out.clear();
    CHECK(t.next(out, Clock::now()) == Step::done);
}

TEST_CASE("title bytes are read ahead two windows at a time and sent in order", "[server][http][transfer]") {
    Title title(10'000);
    auto r = ranged(title, 100, 9'099);
    ResponseTransfer t(r, "H", {.window = 3'000, .read_ahead = 2, .time_slice = 5s});
    SendChain out;
    auto reads = t.take_reads();
    REQUIRE(reads.size() == 2);
    CHECK(reads[0].offset == 100);
    CHECK(reads[0].length == 3'000);
    CHECK(reads[1].offset == 3'100);
    CHECK(t.take_reads().empty());  // no more until one is sent
    // Nothing is committed before the first window arrives, even if the second is there.
    t.on_store_read(reads[1].item, title.read(3'100, 3'000));
    CHECK(t.next(out, Clock::now()) == Step::wait_store);
    CHECK(t.waiting_on_server());
    CHECK_FALSE(t.head_committed());
    t.on_store_read(reads[0].item, title.read(100, 3'000));
    CHECK(t.next(out, Clock::now()) == Step::send);
    CHECK(t.head_committed());
    CHECK_FALSE(t.waiting_on_server());
    std::string wire = take(out, t);
    auto last = t.take_reads();
    REQUIRE(last.size() == 1);
    CHECK(last[0].offset == 6'100);
    CHECK(last[0].length == 3'000);
    CHECK(t.next(out, Clock::now()) == Step::wait_store);
    t.on_store_read(last[0].item, title.read(6'100, 3'000));
    CHECK(t.next(out, Clock::now()) == Step::send);
    wire += take(out, t);
    CHECK(t.next(out, Clock::now()) == Step::done);
    CHECK(wire == "H" + title.bytes->substr(100, 9'000));
}

TEST_CASE("a failed first window fails the response before its head", "[server][http][transfer]") {
    Title title(10'000);
    auto r = ranged(title, 0, 9'999);
    ResponseTransfer t(r, "H", {.window = 4'000, .read_ahead = 2, .time_slice = 5s});
    SendChain out;
    auto reads = t.take_reads();
    ReadResult bad;
    bad.status = ReadStatus::unavailable;
    bad.message = "every replica offline";
    t.on_store_read(reads[0].item, bad);
    CHECK(t.next(out, Clock::now()) == Step::failed);
    CHECK_FALSE(t.head_committed());
    CHECK(out.empty());
    CHECK(t.failure().status == ReadStatus::unavailable);
    CHECK(t.failure().message == "title 'movie' bytes 0-3999: every replica offline");
}

TEST_CASE("a later window failing is reported after the good bytes went out", "[server][http][transfer]") {
    Title title(10'000);
    auto r = ranged(title, 0, 9'999);
    ResponseTransfer t(r, "H", {.window = 4'000, .read_ahead = 2, .time_slice = 5s});
    SendChain out;
    auto reads = t.take_reads();
    t.on_store_read(reads[0].item, title.read(0, 4'000));
    ReadResult wrong = title.read(4'000, 10);  // the store claims success with 10 bytes of 4,000
    t.on_store_read(reads[1].item, wrong);
    CHECK(t.next(out, Clock::now()) == Step::send);
    CHECK(take(out, t) == "H" + title.bytes->substr(0, 4'000));
    CHECK(t.next(out, Clock::now()) == Step::failed);
    CHECK(t.head_committed());
    CHECK(t.failure().status == ReadStatus::io_error);
    CHECK(t.failure().message == "title 'movie' bytes 4000-7999: store returned 10 bytes for a read of 4000");
}

TEST_CASE("multipart framing waits for the first window, then interleaves with the title bytes",
          "[server][http][transfer]") {
    Title title(1'000);
    HttpResponse r;
    r.status = 206;
    r.title = title.info;
    r.parts.push_back({"<a>", ByteRange{0, 9}});
    r.parts.push_back({"<b>", ByteRange{500, 504}});
    r.trailer = "<end>";
    ResponseTransfer t(r, "H", {});
    SendChain out;
    auto reads = t.take_reads();
    REQUIRE(reads.size() == 2);
    CHECK(t.next(out, Clock::now()) == Step::wait_store);
    CHECK(out.empty());
    t.on_store_read(reads[0].item, title.read(0, 10));
    CHECK(t.next(out, Clock::now()) == Step::send);
    std::string wire = take(out, t);
    CHECK(wire == "H<a>" + title.bytes->substr(0, 10) + "<b>");
    CHECK(t.next(out, Clock::now()) == Step::wait_store);
    t.on_store_read(reads[1].item, title.read(500, 5));
    CHECK(t.next(out, Clock::now()) == Step::send);
    CHECK(take(out, t) == title.bytes->substr(500, 5) + "<end>");
    CHECK(t.next(out, Clock::now()) == Step::done);
}

TEST_CASE("a paced body sends the initial buffer and one slice at once, then one slice per time slice",
          "[server][http][transfer][pacing]") {
    // 8 Mbps x 100 ms = 100,000-byte slices; 350,000 bytes = 3 slices and a half.
    Title title(350'000, BitRate(8'000'000));
    HttpResponse r = paced_whole(title);
    ResponseTransfer t(r, "H", {.window = 4 * 1024 * 1024, .read_ahead = 2, .time_slice = 100ms});
    SendChain out;
    const auto t0 = Clock::now();
    auto feed = [&] { feed_all(t, title); };
    feed();
    CHECK(t.next(out, t0) == Step::send);  // the initial buffer
    CHECK(take(out, t).size() == 1 + 100'000);
    feed();
    CHECK(t.next(out, t0 + 10ms) == Step::send);  // the first paced slice follows at once
    CHECK(take(out, t).size() == 100'000);
    feed();
    // That slice started at t0+10ms; the next starts one time slice later.
    CHECK(t.next(out, t0 + 20ms) == Step::wait_pacer);
    CHECK(t.waiting_on_server());
    CHECK(t.pacer_wakeup() == t0 + 110ms);
    CHECK(t.next(out, t0 + 60ms) == Step::wait_pacer);
    CHECK(t.next(out, t0 + 110ms) == Step::send);
    CHECK(take(out, t).size() == 100'000);
    feed();
    // A slow transmission (150 ms for a 100 ms slice) makes the next one start at once.
    CHECK(t.next(out, t0 + 260ms) == Step::send);
    CHECK(take(out, t).size() == 50'000);
    CHECK(t.next(out, t0 + 270ms) == Step::done);
}

TEST_CASE("a title with a demand trace is paced by the trace's rounds, an empty round waited for",
          "[server][http][transfer][pacing]") {
    // 100 ms rounds of 150,000, 20,000, 0, 60,000 and 10,000 bytes (an 8 Mbps bitrate would send 100,000
    // each).
    Title title(240'000, BitRate(8'000'000));
    title.info->trace =
        std::make_shared<const DemandTrace>(DemandTrace{100ms, {150'000, 20'000, 0, 60'000, 10'000}});
    HttpResponse r = paced_whole(title);
    ResponseTransfer t(r, "H", {.window = 4 * 1024 * 1024, .read_ahead = 2, .time_slice = 100ms});
    SendChain out;
    const auto t0 = Clock::now();
    auto feed = [&] { feed_all(t, title); };
    feed();
    CHECK(t.next(out, t0) == Step::send);  // round 0, the initial buffer
    CHECK(take(out, t) == "H" + title.bytes->substr(0, 150'000));
    feed();
    CHECK(t.next(out, t0 + 10ms) == Step::send);  // round 1 at once
    CHECK(take(out, t) == title.bytes->substr(150'000, 20'000));
    feed();
    // Round 2 sends nothing, so round 3 starts two time slices after round 1 did.
    CHECK(t.next(out, t0 + 20ms) == Step::wait_pacer);
    CHECK(t.pacer_wakeup() == t0 + 210ms);
    CHECK(t.next(out, t0 + 120ms) == Step::wait_pacer);
    CHECK(t.next(out, t0 + 210ms) == Step::send);
    CHECK(take(out, t) == title.bytes->substr(170'000, 60'000));
    feed();
    CHECK(t.next(out, t0 + 220ms) == Step::wait_pacer);
    CHECK(t.pacer_wakeup() == t0 + 310ms);
    CHECK(t.next(out, t0 + 310ms) == Step::send);
    CHECK(take(out, t) == title.bytes->substr(230'000, 10'000));
    CHECK(t.next(out, t0 + 320ms) == Step::done);

    // The same title without its trace goes at the bitrate: 100,000 bytes a round.
    title.info->trace.reset();
    ResponseTransfer flat(r, "H", {.window = 4 * 1024 * 1024, .read_ahead = 2, .time_slice = 100ms});
    feed_all(flat, title);
    CHECK(flat.next(out, t0) == Step::send);
    CHECK(take(out, flat).size() == 1 + 100'000);
}

TEST_CASE("an answer whose reads were ready after the request's deadline carries Toast-Late",
          "[server][http][transfer]") {
    Title title(1'000);
    HttpResponse r = ranged(title, 0, 99);
    for (const bool with_deadline : {true, false}) {
        INFO(with_deadline);
        if (with_deadline)
            r.deadline = std::chrono::milliseconds(500);
        else
            r.deadline.reset();
        ResponseTransfer t(r, "HTTP/1.1 206 Partial Content\r\nContent-Length: 100\r\n\r\n", {});
        SendChain out;
        for (const auto& rd : t.take_reads()) {
            auto result = title.read(rd.offset, rd.length);
            result.late = std::chrono::microseconds(41'200);
            t.on_store_read(rd.item, std::move(result));
        }
        CHECK(t.next(out, Clock::now()) == Step::send);
        const auto head =
            with_deadline ? "HTTP/1.1 206 Partial Content\r\nContent-Length: 100\r\nToast-Late: 42\r\n\r\n"
                          : "HTTP/1.1 206 Partial Content\r\nContent-Length: 100\r\n\r\n";
        CHECK(take(out, t) == head + title.bytes->substr(0, 100));
    }
}

TEST_CASE("HEAD of a title and an empty title need no store read", "[server][http][transfer]") {
    Title title(1'000);
    HttpResponse head;
    head.title = title.info;
    head.parts.push_back({"", ByteRange{0, 999}});
    head.head_only = true;
    ResponseTransfer t(head, "H", {});
    SendChain out;
    CHECK(t.take_reads().empty());
    CHECK(t.next(out, Clock::now()) == Step::send);
    CHECK(take(out, t) == "H");
    CHECK(t.next(out, Clock::now()) == Step::done);

    Title empty(0);
    HttpResponse whole;
    whole.title = empty.info;
    ResponseTransfer e(whole, "E", {});
    CHECK(e.take_reads().empty());
    CHECK(e.next(out, Clock::now()) == Step::send);
    CHECK(take(out, e) == "E");
    CHECK(e.next(out, Clock::now()) == Step::done);
}
