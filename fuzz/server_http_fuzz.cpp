// toast-server's request path: raw bytes -> Beast's parser (the session's limits) -> request_view ->
// handle_request -> serialize_head. Every request is answered from the loopback peer (admin routes open),
// from a remote peer, and on the admin listener. Checks: a response head never breaks a header line, a
// title body stays inside the title, and every status has a reason phrase.
#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "fuzz_support.hpp"
#include "server/core/request_handler.hpp"
#include "server/http/request_view.hpp"
#include "server_fakes.hpp"

namespace {

using namespace toast;
using namespace toast::server;

class Titles : public TitleStore {
  public:
    Titles() {
        add("movie.mp4", 1'000'000);
        add("empty", 0);
        add("a b%c", 1);
    }
    std::shared_ptr<const TitleInfo> find(std::string_view name) const override {
        auto it = titles_.find(std::string(name));
        return it == titles_.end() ? nullptr : it->second;
    }
    std::vector<std::shared_ptr<const TitleInfo>> titles() const override {
        std::vector<std::shared_ptr<const TitleInfo>> all;
        for (const auto& [name, t] : titles_)
            all.push_back(t);
        return all;
    }
    std::optional<std::string> torrent(const TitleInfo& title) const override {
        if (title.info_hash.empty()) return std::nullopt;
        return std::string("d4:infod6:lengthi1e4:name1:aee");
    }
    void read(ReadRequest, ReadHandler done) override {
        done(fuzz::failed_read("the fuzz store holds no bytes"));
    }
    void interrupt_reads() override {}

  private:
    void add(const std::string& name, std::uint64_t size) {
        auto t = std::make_shared<TitleInfo>();
        t->name = name;
        t->size = size;
        t->bitrate = BitRate(2'000'000);
        t->block_size = 1 << 20;
        t->etag = "\"0123456789abcdef\"";
        t->file_name = name + ".mp4";
        if (size > 0) t->info_hash = "d967f544993f290178692f681c9faa9e3aee4145";
        t->last_modified = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
        titles_[name] = std::move(t);
    }
    std::map<std::string, std::shared_ptr<const TitleInfo>> titles_;
};

void check(const HttpResponse& r) {
    TOAST_FUZZ_CHECK(r.status >= 200 && r.status <= 599);
    TOAST_FUZZ_CHECK(reason_phrase(r.status) != "Unknown");
    for (const auto& h : r.headers) {
        TOAST_FUZZ_CHECK(!h.name.empty() && !fuzz::breaks_header_line(h.name));
        TOAST_FUZZ_CHECK(!fuzz::breaks_header_line(h.value));
    }
    if (r.title) {
        for (const auto& p : r.parts) {
            TOAST_FUZZ_CHECK(p.range.first <= p.range.last);
            TOAST_FUZZ_CHECK(p.range.last < r.title->size);
        }
    }
    auto head = serialize_head(r, true, "Sun, 06 Nov 1994 08:49:37 GMT");
    TOAST_FUZZ_CHECK(head.size() >= 4 && head.substr(head.size() - 4) == "\r\n\r\n");
    TOAST_FUZZ_CHECK(head.find("\r\n\r\n") == head.size() - 4);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static Titles titles;
    static MetricsRegistry metrics;
    fuzz::TwoDisks disks;  // faults set by one input must not change the next one's answers
    HandlerLimits limits;
    limits.max_ranges = 16;
    limits.max_multipart_bytes = 64 * 1024;
    HandlerContext open{titles, disks, metrics, limits};
    HandlerLimits separate = limits;
    separate.admin_on_separate_listener = true;
    HandlerContext admin{titles, disks, metrics, separate};

    fuzz::for_each_request<boost::beast::http::string_body>(
        fuzz::as_text(data, size), 8 * 1024, kMaxRequestBody, 8, [&](const BeastRequest& msg) {
            check(handle_request(request_view(msg, true, false), open));
            check(handle_request(request_view(msg, false, false), open));
            check(handle_request(request_view(msg, true, true), admin));
        });
    return 0;
}
