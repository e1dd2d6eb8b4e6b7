#include "detail/script_cache.hpp"

#include "detail/commands.hpp"
#include "detail/scripts.hpp"

#include <openssl/evp.h>

#include <array>
#include <charconv>
#include <new>
#include <vector>

namespace redlock::detail {
namespace {

struct cached_script {
  std::string_view body;
  std::string sha1;
};

/// The scripts sent by EVALSHA, with their SHA1s and SCRIPT LOAD commands,
/// made once (on first use, by whichever thread comes first).
struct script_table {
  std::vector<cached_script> scripts;
  std::vector<std::string> loads;

  script_table() {
    for (auto body : {release_script(), reentrant_release_script()}) {
      scripts.push_back({body, sha1_hex(body)});
      loads.push_back(format_command({"SCRIPT", "LOAD", body}));
    }
  }
};

const script_table& table() {
  static const script_table instance;
  return instance;
}

}  // namespace

std::string sha1_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest.data(), &length, EVP_sha1(), nullptr) != 1) {
    // Only out of memory (or an OpenSSL without SHA1, which Redis itself
    // could not be built against).
    throw std::bad_alloc();
  }
  constexpr std::string_view hex = "0123456789abcdef";
  std::string text;
  text.reserve(2 * length);
  for (unsigned i = 0; i < length; ++i) {
    text.push_back(hex[digest[i] >> 4]);
    text.push_back(hex[digest[i] & 0xf]);
  }
  return text;
}

std::string_view cached_script_sha1(std::string_view script) {
  for (const auto& cached : table().scripts) {
    // The same string (commands pass the scripts.hpp views), or an equal one.
    if (cached.body.data() == script.data() || cached.body == script) return cached.sha1;
  }
  return {};
}

std::span<const std::string> script_load_commands() { return table().loads; }

std::string eval_fallback(std::string_view command) {
  // *<argc>\r\n$7\r\nEVALSHA\r\n$40\r\n<sha1>\r\n<the rest, kept as it is>
  const auto header_end = command.find("\r\n");
  if (!command.starts_with('*') || header_end == std::string_view::npos) return {};
  const auto header = command.substr(0, header_end + 2);
  auto rest = command.substr(header.size());
  constexpr std::string_view verb = "$7\r\nEVALSHA\r\n$40\r\n";
  if (!rest.starts_with(verb) || rest.size() < verb.size() + 42) return {};
  const auto sha = rest.substr(verb.size(), 40);
  if (rest.substr(verb.size() + 40, 2) != "\r\n") return {};
  rest.remove_prefix(verb.size() + 42);

  for (const auto& cached : table().scripts) {
    if (cached.sha1 != sha) continue;
    std::array<char, 24> digits{};
    const auto length =
        std::to_chars(digits.data(), digits.data() + digits.size(), cached.body.size());
    const std::string_view body_length(digits.data(),
                                       static_cast<std::size_t>(length.ptr - digits.data()));
    constexpr std::string_view eval = "$4\r\nEVAL\r\n$";
    std::string text;
    text.reserve(header.size() + eval.size() + body_length.size() + 2 + cached.body.size() + 2 +
                 rest.size());
    text.append(header).append(eval).append(body_length).append("\r\n");
    text.append(cached.body).append("\r\n").append(rest);
    return text;
  }
  return {};
}

}  // namespace redlock::detail
