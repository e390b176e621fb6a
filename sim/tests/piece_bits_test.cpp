#include <catch2/catch.hpp>

#include "sim/core/piece_bits.hpp"

using toast::sim::PieceBits;

TEST_CASE("piece bits find the first missing piece, a whole set's being its size", "[sim][swarm]") {
    PieceBits b(130);
    CHECK(b.first_missing() == 0);
    for (int p = 0; p < 130; ++p) {
        CHECK(b.first_missing() == p);
        CHECK(!b.all());
        CHECK(b.set(p));
    }
    CHECK(b.all());
    CHECK(b.first_missing() == 130);
    CHECK(b.clear(129));
    CHECK(b.first_missing() == 129);
    CHECK(b.clear(64));
    CHECK(b.first_missing() == 64);
    CHECK(b.count() == 128);
    PieceBits none;
    CHECK(none.first_missing() == 0);
    CHECK(none.all());
}

TEST_CASE("piece bits answer whether a peer has a piece one wants, as a walk over the pieces would",
          "[sim][swarm]") {
    PieceBits have(100), wanted(100), asked(100);
    CHECK(!have.any_and_not(wanted, PieceBits()));
    wanted.set(70);
    CHECK(!have.any_and_not(wanted, PieceBits()));
    have.set(70);
    CHECK(have.any_and_not(wanted, PieceBits()));
    asked.set(70);
    CHECK(!have.any_and_not(wanted, asked));
    have.set_all();
    CHECK(have.all());
    CHECK(have.any_and_not(wanted, PieceBits()) == !wanted.none());
    wanted.clear(70);
    CHECK(wanted.none());
    CHECK(!have.any_and_not(wanted, PieceBits()));
}
