// Pre-placement ("push"): which pieces of which titles each registered box should hold before the peak, so
// that idle boxes' upload carries what the titles' own viewers cannot. Pure: the catalogue's demand and the
// boxes in, the plan out; deterministic for a seed.
//
// The rule, per title, most demanded first (ties by name):
//   - its expected viewers at the peak: V = peak_viewers x its share of the total demand; planned for with
//     headroom for the peak's spread, every title's V scaled by (P + headroom x sqrt(P)) / P, P the peak's
//     viewers (the catalogue's total is Poisson: its spread is sqrt(P), not the sum of each title's);
//   - its expected deficit: E[N x bitrate - min(N x u, (N - 1) x bitrate)] over N ~ Poisson(V scaled), what
//     N viewers need beyond what they can upload to each other, u the boxes' mean upload (a lone viewer has
//     nobody to upload to: at least one copy must enter the swarm from outside it); under 1% of the bitrate
//     counts as none;
//   - the title's pieces are cut into chunks of `chunk_pieces`, and the chunks dealt round-robin into S
//     stripes (chunk c in stripe c mod S), so a viewer draws on every stripe's holders in turn; S is chosen
//     so each holder commits about `holder_share` of a typical box's idle upload: S = ceil(deficit /
//     (replicas x target)), at least `min_stripes` (small stripes spread the bytes and the viewers' requests
//     over more boxes), at most one stripe per chunk;
//   - each stripe goes to k >= replicas boxes, k = ceil(stripe's deficit / target), each committing its
//     share; the boxes are taken in rendezvous-hash order of (seed, title, stripe, box), as RDA draws disks
//     at random, so a box that joins or leaves moves only the stripes it ranks first for; of the first four
//     boxes in that order that have room for the stripe's bytes in their push quota, do not hold it, and
//     can commit a whole share (else some upload; for the first `replicas` holders, else room alone), the
//     least loaded takes it (load: the larger of its committed share of idle upload and its used share of
//     quota; a few choices keep the load even), preferring boxes that hold no other stripe of the title; a
//     holder commits its share or what upload it has left, and holders are added until the stripe's deficit
//     is committed or no box can commit more;
//   - a box's idle upload at the peak is its upload x (1 - peak_viewers / boxes): the share of boxes not
//     watching then;
//   - a title whose stripes cannot each get `replicas` holders (quotas full) is not placed at all, and the
//     next, less demanded, title is tried.
// Invariants: every placed stripe has >= replicas distinct holders; no box holds more than its quota; a
// box's commitments never exceed its idle upload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "toast/common/units.hpp"

namespace toast::server {

struct PieceSpan {
    std::uint32_t first = 0;
    std::uint32_t last = 0;  // inclusive
    bool operator==(const PieceSpan&) const = default;
};

struct PlanTitle {
    std::string name;
    std::string info_hash;
    Bytes size{0};
    Bytes piece_size{0};
    BitRate bitrate{0};
    double demand = 0;  // sessions started per hour (TitleDemand)
};

struct PlanBox {
    std::string id;
    BitRate upload{0};
    Bytes quota{0};  // its push quota
};

struct PlannerSettings {
    double peak_viewers = 0;  // concurrent viewers expected at the peak, every title together
    double headroom = 1.0;    // standard deviations of the peak's total viewers planned for
    std::uint32_t replicas = 2;
    double holder_share = 0.5;  // of the median box's idle upload, committed by one holder to one stripe
    std::uint32_t chunk_pieces = 8;
    std::uint32_t min_stripes = 4;  // a title is cut in at least this many stripes (if it has the chunks)
    std::uint64_t seed = 1;
};

// What one box holds of one title.
struct Holding {
    std::size_t title = 0;               // index into PushPlan::titles
    std::vector<std::uint32_t> stripes;  // ascending
    std::vector<PieceSpan> pieces;       // ascending, disjoint, not adjacent
    Bytes bytes{0};
    double upload_bps = 0;  // committed to the title at the peak
};

struct BoxPlan {
    std::string id;
    std::vector<Holding> holdings;  // by title index
    Bytes bytes{0};
    double committed_bps = 0;
    double idle_upload_bps = 0;
};

struct TitlePlan {
    std::string name;
    std::string info_hash;
    Bytes size{0};
    Bytes piece_size{0};
    BitRate bitrate{0};
    double demand = 0;
    double expected_viewers = 0;  // V, the mean at the peak
    double deficit_bps = 0;
    double covered_bps = 0;                         // committed by its holders
    std::uint32_t stripes = 0;                      // 0: not placed
    std::vector<std::vector<std::size_t>> holders;  // per stripe: indices into PushPlan::boxes
    std::string note;                               // why it is not (fully) placed; empty when covered
};

struct PushPlan {
    std::vector<TitlePlan> titles;  // in planning order: most demanded first
    std::vector<BoxPlan> boxes;     // in the order given
};

PushPlan plan_push(const std::vector<PlanTitle>& titles, const std::vector<PlanBox>& boxes,
                   const PlannerSettings& settings);

// The pieces of stripe `stripe` of `stripes` for a title of `pieces` pieces cut in chunks of `chunk_pieces`.
std::vector<PieceSpan> stripe_pieces(std::uint32_t pieces, std::uint32_t chunk_pieces, std::uint32_t stripes,
                                     std::uint32_t stripe);
// E[n x bitrate - min(n x upload, (n - 1) x bitrate)] for n ~ Poisson(viewers): what a title's viewers need
// from others than themselves, in bits per second.
double expected_deficit(double viewers, double bitrate, double upload);

// Bytes of `spans` in a title of `size` bytes and pieces of `piece_size`.
Bytes span_bytes(const std::vector<PieceSpan>& spans, Bytes size, Bytes piece_size);
// `spans` sorted and merged (adjacent spans joined).
std::vector<PieceSpan> merge_spans(std::vector<PieceSpan> spans);

}  // namespace toast::server
