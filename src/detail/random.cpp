#include "detail/random.hpp"

#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <random>
#include <system_error>

namespace redlock::detail {

std::string make_token() {
  std::array<unsigned char, 16> bytes{};
  std::size_t filled = 0;
  while (filled < bytes.size()) {
    const auto got = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "getrandom");
    }
    filled += static_cast<std::size_t>(got);
  }
  static constexpr char digits[] = "0123456789abcdef";
  std::string token(bytes.size() * 2, '0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    token[2 * i] = digits[bytes[i] >> 4];
    token[2 * i + 1] = digits[bytes[i] & 0xf];
  }
  return token;
}

double unit_random() noexcept {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

}  // namespace redlock::detail
