#include "detail/random.hpp"

#include <pthread.h>
#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <random>
#include <system_error>
#include <utility>

namespace redlock::detail {
namespace {

/// Bytes from getrandom(2), fetched a block at a time: one system call per
/// 32 tokens instead of one per token (it was 3% of a busy client's CPU).
/// Each thread has its own; a forked child drops what its parent fetched,
/// or both would hand out the same tokens.
struct random_pool {
  static constexpr std::size_t block = 512;
  std::array<unsigned char, block> bytes{};
  std::size_t used = block;  ///< bytes[used..] are unused; block: empty.

  void take(unsigned char* out, std::size_t n) {
    if (block - used < n) refill();
    for (std::size_t i = 0; i < n; ++i) out[i] = std::exchange(bytes[used + i], 0);
    used += n;
  }

  void refill() {
    std::size_t filled = 0;
    while (filled < block) {
      const auto got = ::getrandom(bytes.data() + filled, block - filled, 0);
      if (got < 0) {
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "getrandom");
      }
      filled += static_cast<std::size_t>(got);
    }
    used = 0;
  }

  void forget() noexcept {
    bytes.fill(0);
    used = block;
  }
};

thread_local random_pool pool;

/// In a forked child only the forking thread lives on: its pool is the one
/// its parent may still draw from.
void forget_after_fork() noexcept { pool.forget(); }

}  // namespace

std::string make_token() {
  static std::once_flag registered;
  std::call_once(registered, [] { ::pthread_atfork(nullptr, nullptr, &forget_after_fork); });
  std::array<unsigned char, 16> bytes{};
  pool.take(bytes.data(), bytes.size());
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
