// Python's random.Random, reproduced for the draws the testbed makes: the poisson arrivals of a single-title
// scenario come from random.Random(random_seed).expovariate, and the simulator must start its viewers at the
// same times. The engine is MT19937 (std::mt19937), seeded as CPython seeds it from an integer
// (init_by_array over the integer's 32-bit words); random() takes 53 bits from two outputs as CPython does.
#pragma once

#include <cstdint>
#include <random>

namespace toast::sim {

class PyRandom {
  public:
    explicit PyRandom(std::uint64_t seed);
    double random();                   // [0, 1), as random.random()
    double expovariate(double lambd);  // as random.expovariate(lambd)
    std::uint32_t next_u32() { return static_cast<std::uint32_t>(engine_()); }

  private:
    std::mt19937 engine_;
};

}  // namespace toast::sim
