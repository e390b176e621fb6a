// The routes of catalogue demand and pre-placement, answered like the rest of handle_request: from a
// PushControl (the coordinator owning the demand, the registered boxes and the plan), no sockets.
//   GET  /push/assignment?box=ID[&upload_bps=N][&quota=BYTES]   registers (or refreshes) the box and answers
//                                                                its assignment (JSON below)
//   GET  /push/plan                                              the current plan, every title and box
//   POST /catalog/plays?info_hash=HEX[&box=ID]                   a box started a title: 204, counted in its
//                                                                demand
//
// The assignment:
//   {"box": "b17", "plan": "9f86d081884c7d65", "generation": 3,
//    "window": {"start_ms": 1700000000000, "end_ms": 1700014400000}, "rate_bps": 2000000,
//    "quota": 2147483648, "upload_bps": 1000000, "refresh_s": 300,
//    "titles": [{"name": "t001", "info_hash": "<40 hex>", "torrent": "/torrents/t001.torrent",
//                "piece_size": 262144, "pieces": 229, "ranges": [[0, 7], [64, 71]], "bytes": 4194304}]}
// `plan` identifies the assignment's content (it changes exactly when the titles or ranges do), `ranges` are
// inclusive piece ranges, `torrent` is relative to the server's URL.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/core/push_config.hpp"
#include "server/core/push_planner.hpp"
#include "toast/common/units.hpp"

namespace toast::server {

struct HttpRequest;
struct HttpResponse;

struct BoxRegistration {
    std::string box;
    std::optional<BitRate> upload;
    std::optional<Bytes> quota;
};

struct AssignedTitle {
    std::string name;
    std::string info_hash;
    Bytes piece_size{0};
    std::uint32_t pieces = 0;  // the title's
    std::vector<PieceSpan> ranges;
    Bytes bytes{0};
};

struct BoxAssignment {
    std::string box;
    std::uint64_t generation = 0;  // the plan's: counts re-plans
    WindowTimes window;
    BitRate rate{0};
    Bytes quota{0};
    BitRate upload{0};
    std::chrono::seconds refresh{0};
    std::vector<AssignedTitle> titles;
};

// What the routes need from the coordinator (server/io/push_coordinator). Thread-safe.
class PushControl {
  public:
    virtual ~PushControl() = default;
    // Each title's demand now (sessions per hour), by name.
    virtual std::map<std::string, double> demand() = 0;
    // A session of the title with this info-hash started; false when no title has it.
    virtual bool record_play(std::string_view info_hash, std::string_view box) = 0;
    // Registers or refreshes the box (re-planning if that changes the plan) and returns its assignment;
    // nullopt when push is not enabled.
    virtual std::optional<BoxAssignment> assign(const BoxRegistration& box) = 0;
    // The current plan and its generation; nullopt when push is not enabled.
    virtual std::optional<std::pair<PushPlan, std::uint64_t>> plan() = 0;
};

// The query string of /push/assignment, or nullopt with `error` naming the parameter.
std::optional<BoxRegistration> parse_registration(std::string_view query, std::string* error);

// The assignment's JSON body (above).
std::string assignment_json(const BoxAssignment& assignment);
// The plan for operators: every title (demand, expected viewers, deficit, covered, stripes, holders per
// stripe, note) and every box (bytes, committed upload, idle upload, titles).
nlohmann::json push_plan_json(const PushPlan& plan, std::uint64_t generation);

// `path` is the request's path (no query); the query is read from the request's target.
HttpResponse serve_push(const HttpRequest& request, std::string_view path, PushControl* push);

}  // namespace toast::server
