#include "server/io/tier_store.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

#include <spdlog/spdlog.h>

#include "server/core/tier_read_plan.hpp"

namespace toast::server {

using Clock = std::chrono::steady_clock;

struct TierStore::Op {
    ReadRequest request;
    std::vector<TierReadPart> parts;
    std::vector<std::vector<Segment>> segments;   // per part
    std::vector<std::vector<std::size_t>> tried;  // per remote part: nodes asked (TierView indices)
    std::vector<std::string> errors;              // per remote part: what they said
    std::atomic<std::size_t> remaining{0};
    std::mutex mutex;
    ReadStatus status = ReadStatus::ok;
    std::string message;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> unavailable_block;
    std::chrono::nanoseconds late{0};
    ReadHandler done;

    void fail(ReadStatus s, std::string why, std::optional<std::pair<std::uint64_t, std::uint64_t>> block) {
        std::lock_guard lock(mutex);
        if (status != ReadStatus::ok) return;
        status = s;
        message = std::move(why);
        unavailable_block = block;
    }

    void complete(std::size_t part, ReadResult result) {
        {
            std::lock_guard lock(mutex);
            late = std::max(late, result.late);
            if (result.status == ReadStatus::ok) {
                segments[part] = std::move(result.segments);
            } else if (status == ReadStatus::ok) {
                status = result.status;
                message = std::move(result.message);
                unavailable_block = result.unavailable_block;
            }
        }
        if (remaining.fetch_sub(1) != 1) return;
        ReadResult out;
        out.status = status;
        out.message = std::move(message);
        out.unavailable_block = unavailable_block;
        out.late = late;
        if (request.deadline)
            out.late = std::max(out.late, std::chrono::nanoseconds(Clock::now() - *request.deadline));
        if (out.late.count() < 0) out.late = {};
        if (out.status == ReadStatus::ok)
            for (auto& s : segments)
                for (auto& seg : s)
                    out.segments.push_back(std::move(seg));
        auto handler = std::move(done);
        handler(std::move(out));
    }
};

void TierStore::read(ReadRequest request, ReadHandler done) {
    const auto& title = request.title;
    if (!title || !title->tier || request.length == 0 || request.offset > title->size ||
        request.length > title->size - request.offset ||
        holds_range(*title, request.offset, request.length)) {
        local_.read(std::move(request), std::move(done));
        return;
    }
    auto op = std::make_shared<Op>();
    op->parts = plan_tier_read(*title, request.offset, request.length);
    op->request = std::move(request);
    op->done = std::move(done);
    const auto n = op->parts.size();
    op->segments.resize(n);
    op->tried.resize(n);
    op->errors.resize(n);
    op->remaining = n;
    for (std::size_t i = 0; i < n; ++i) {
        const auto& part = op->parts[i];
        if (!part.local) {
            relay(op, i);
            continue;
        }
        auto sub = op->request;
        sub.offset = part.offset;
        sub.length = part.length;
        local_.read(std::move(sub), [op, i](ReadResult r) { op->complete(i, std::move(r)); });
    }
}

void TierStore::relay(const std::shared_ptr<Op>& op, std::size_t i) {
    const auto& part = op->parts[i];
    const auto& title = *op->request.title;
    const auto& tier = *title.tier;
    std::vector<std::size_t> holders;
    for (auto h : tier.holders.at(part.block))
        holders.push_back(client_.node(tier.layout.node(h).url));
    const auto node = client_.choose(holders, op->tried[i], holder_tie_break(relays_++, part.block));
    if (!node) {
        const auto first = part.block * title.block_size;
        const auto last = std::min(first + title.block_size, title.size) - 1;
        std::string names;
        for (auto h : tier.holders.at(part.block))
            names += (names.empty() ? "" : ", ") + tier.layout.node(h).id;
        ReadResult r;
        r.status = ReadStatus::unavailable;
        r.message = "title \"" + title.name + "\" block " + std::to_string(part.block) +
                    ": no holder could serve it (nodes " + names + "): " + op->errors[i];
        r.unavailable_block = std::pair{first, last};
        op->complete(i, std::move(r));
        return;
    }
    op->tried[i].push_back(*node);
    RelayRequest r;
    r.title = title.name;
    r.target = "/titles/" + title.name;
    r.etag = title.etag;
    r.offset = part.offset;
    r.length = part.length;
    r.deadline = op->request.deadline;
    r.revalidate = op->request.revalidate;
    client_.fetch(*node, std::move(r), [this, op, i, node = *node](RelayAnswer a) {
        if (a.data) {
            ReadResult ok;
            ok.segments.push_back(MemorySegment{a.data, 0, a.data->size()});
            op->complete(i, std::move(ok));
            return;
        }
        const auto url = client_.url(node);
        spdlog::warn("tier: block {} of \"{}\" from {} failed: {}", op->parts[i].block,
                     op->request.title->name, url, a.error);
        op->errors[i] += (op->errors[i].empty() ? "" : "; ") + url + ": " + a.error;
        relay(op, i);
    });
}

void TierStore::interrupt_reads() {
    local_.interrupt_reads();
}

}  // namespace toast::server
