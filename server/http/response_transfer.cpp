#include "server/http/response_transfer.hpp"

#include <variant>

#include "server/core/stream_schedule.hpp"
#include "server/io/open_file.hpp"

namespace toast::server {

ResponseTransfer::ResponseTransfer(const HttpResponse& response, std::string head, const Limits& limits)
    : response_(response), head_(std::move(head)), limits_(limits) {
    if (response.title && !response.head_only && response.content_length() > 0) {
        planned_ = true;
        std::vector<std::uint64_t> slices;
        if (response.paced) {
            const auto& title = *response.title;
            pacer_.emplace(title.bitrate, limits_.time_slice);
            slices = paced_rounds(title.size, title.bitrate, title.trace.get(), limits_.time_slice);
        }
        items_ = plan_body(response, limits_.window, slices);
    }
}

std::vector<ResponseTransfer::StoreRead> ResponseTransfer::take_reads() {
    std::vector<StoreRead> reads;
    while (next_fetch_ < items_.size() && slots_.size() < limits_.read_ahead) {
        const auto& item = items_[next_fetch_];
        if (!item.literal) {
            slots_.push_back(Slot{next_fetch_, false, {}});
            reads.push_back(StoreRead{next_fetch_, item.offset, item.length});
        }
        ++next_fetch_;
    }
    return reads;
}

void ResponseTransfer::on_store_read(std::size_t item, ReadResult result) {
    for (auto& slot : slots_) {
        if (slot.item == item && !slot.ready) {
            slot.ready = true;
            slot.result = std::move(result);
            return;
        }
    }
}

void ResponseTransfer::commit_head(SendChain& out) {
    out.push_memory(head_.data(), head_.size());
    head_left_ = head_.size();
    head_committed_ = true;
}

std::uint64_t ResponseTransfer::on_sent(std::uint64_t n) {
    const auto from_head = std::min(n, head_left_);
    head_left_ -= from_head;
    return n - from_head;
}

ResponseTransfer::Step ResponseTransfer::fail_with(const BodyItem& item, const ReadResult& result,
                                                   const std::string& why) {
    // A store that answered ok with the wrong number of bytes is an I/O error of ours.
    failure_.status = result.status == ReadStatus::ok ? ReadStatus::io_error : result.status;
    failure_.unavailable_block = result.unavailable_block;
    failure_.message = "title '" + response_.title->name + "' bytes " + std::to_string(item.offset) + "-" +
                       std::to_string(item.offset + item.length - 1) + ": " + why;
    waiting_on_server_ = false;
    return Step::failed;
}

std::string ResponseTransfer::window_problem(const BodyItem& item, const ReadResult& result) {
    if (result.status != ReadStatus::ok) return result.message;
    std::uint64_t total = 0;
    for (const auto& seg : result.segments)
        std::visit([&](const auto& s) { total += s.length; }, seg);
    if (total == item.length) return {};
    return "store returned " + std::to_string(total) + " bytes for a read of " + std::to_string(item.length);
}

void ResponseTransfer::append_window(const ReadResult& result, SendChain& out) {
    for (const auto& seg : result.segments) {
        if (const auto* f = std::get_if<FileSegment>(&seg)) {
            out.push_file(f->file->fd(), f->offset, f->length, f->file);
        } else {
            const auto& m = std::get<MemorySegment>(seg);
            out.push_memory(m.data->data() + m.offset, m.length, m.data);
        }
    }
}

ResponseTransfer::Step ResponseTransfer::next(SendChain& out, Clock::time_point now) {
    waiting_on_server_ = false;
    if (slice_in_flight_) {
        // `out` ran empty: the paced transmission that started at slice_started_at_ is complete.
        slice_in_flight_ = false;
        next_slice_at_ = pacer_->on_transmitted(slice_started_at_, now);
        // Rounds of the schedule with nothing to send still take their time slice.
        if (next_item_ < items_.size()) next_slice_at_ += items_[next_item_].idle_before * limits_.time_slice;
    }
    if (finished_) return Step::done;
    if (!planned_) {
        commit_head(out);
        if (!response_.head_only) out.push_memory(response_.body.data(), response_.body.size());
        finished_ = true;
        return Step::send;
    }

    if (!head_committed_) {
        // The first window decides between the planned answer and a 503/500.
        if (slots_.empty() || !slots_.front().ready) {
            waiting_on_server_ = true;
            return Step::wait_store;
        }
        const auto& first = slots_.front();
        if (auto problem = window_problem(items_[first.item], first.result); !problem.empty()) {
            return fail_with(items_[first.item], first.result, problem);
        }
        // A request that said when it needs its bytes learns that the disks are behind (overload, a slow
        // disk), so a client with another server or peers can turn to them next time.
        if (response_.deadline && first.result.late > std::chrono::nanoseconds(0) && head_.size() >= 2) {
            const auto late_ms = std::chrono::ceil<std::chrono::milliseconds>(first.result.late).count();
            head_.insert(head_.size() - 2, "Toast-Late: " + std::to_string(late_ms) + "\r\n");
        }
    }

    bool appended = false;
    while (next_item_ < items_.size()) {
        const auto& item = items_[next_item_];
        if (pacer_ && item.slice_start) {
            if (appended) break;  // the previous slice goes out on its own
            if (!pacer_->initial() && now < next_slice_at_) {
                waiting_on_server_ = true;
                return Step::wait_pacer;
            }
            slice_started_at_ = now;
        }
        if (item.literal) {
            const std::string& text =
                item.part == BodyItem::kTrailer ? response_.trailer : response_.parts[item.part].prefix;
            if (!head_committed_) commit_head(out);
            out.push_memory(text.data(), text.size());
        } else {
            if (slots_.empty() || slots_.front().item != next_item_ || !slots_.front().ready) break;
            const auto& slot = slots_.front();
            if (auto problem = window_problem(item, slot.result); !problem.empty()) {
                if (appended) break;  // send what is good first; the next call reports the failure
                return fail_with(item, slot.result, problem);
            }
            if (!head_committed_) commit_head(out);
            append_window(slot.result, out);
            slots_.pop_front();
        }
        ++next_item_;
        appended = true;
        if (pacer_ && item.slice_end) {
            slice_in_flight_ = true;
            break;
        }
    }
    if (appended) return Step::send;
    if (next_item_ == items_.size()) {
        finished_ = true;
        return Step::done;
    }
    waiting_on_server_ = true;
    return Step::wait_store;
}

}  // namespace toast::server
