// The server's admin fault route: the body of POST /admin/disks/1/fault -> handle_request (the same reader as
// the config file's "fault" objects). Checks: 200 or 400, and an accepted fault is inside its bounds (a huge
// added_latency once wrapped to a negative time).
#include <chrono>

#include "fuzz_support.hpp"
#include "server/core/request_handler.hpp"
#include "server_fakes.hpp"

namespace {

using namespace toast;
using namespace toast::server;
using namespace std::chrono_literals;

class NoTitles : public TitleStore {
  public:
    std::shared_ptr<const TitleInfo> find(std::string_view) const override { return nullptr; }
    std::vector<std::shared_ptr<const TitleInfo>> titles() const override { return {}; }
    std::optional<std::string> torrent(const TitleInfo&) const override { return std::nullopt; }
    void read(ReadRequest, ReadHandler done) override { done(fuzz::failed_read("no titles")); }
    void interrupt_reads() override {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static NoTitles titles;
    static MetricsRegistry metrics;
    fuzz::TwoDisks disks;
    HandlerContext ctx{titles, disks, metrics, HandlerLimits{}};
    HttpRequest req;
    req.method = "POST";
    req.target = "/admin/disks/1/fault";
    req.body = fuzz::as_text(data, size);
    req.content_type = "application/json";
    req.has_content_type = true;
    req.peer_is_loopback = true;
    auto r = handle_request(req, ctx);
    TOAST_FUZZ_CHECK(r.status == 200 || r.status == 400);
    const auto fault = disks.disk_status()[1].fault;
    if (r.status == 200) {
        TOAST_FUZZ_CHECK(fault.added_latency >= 0ns && fault.added_latency <= 10min);
        TOAST_FUZZ_CHECK(fault.stutter_pct >= 0 && fault.stutter_pct <= 10000);
        TOAST_FUZZ_CHECK(r.body.find("ns\"") != std::string::npos);
    } else {
        TOAST_FUZZ_CHECK(fault == DiskFault{});  // a refused body changes nothing
    }
    return 0;
}
