#include "transport/rdma/pattern.hpp"

#include "transport/message_pattern.hpp"

namespace meshperf::transport::rdma {

void fill_pattern(std::span<std::byte> out, std::uint32_t seed) noexcept { fill_message_pattern(out, seed); }

}  // namespace meshperf::transport::rdma
