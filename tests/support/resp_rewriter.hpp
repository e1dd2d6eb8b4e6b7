// An incremental parser of the client -> server RESP stream that can scale
// TTL arguments on the way to a node. No sockets here: fault_proxy feeds it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::test {

/// Parses what a client sends (arrays of bulk strings; inline commands are
/// passed through untouched) and multiplies, by factor(), the TTL argument of
///   SET key value ... PX n ...            (the n after PX)
///   PEXPIRE key n [NX|XX|GT|LT]
///   EVAL|EVALSHA script 1 key token n     (numkeys 1 and exactly 2 ARGV)
/// Command names are matched case-insensitively. The new value is
/// scale(n, factor()). Only canonical positive decimal numbers are rewritten
/// (0, negatives, "010" and non-numbers go through as they are, so the node
/// answers exactly what it would have answered).
///
/// A command that can be rewritten is held back until it is complete, then
/// emitted (rewritten or not); any other command streams through as soon as
/// its name is known. Bytes other than the rewritten argument are emitted
/// unchanged, and at factor 1.0 the output equals the input, whatever the
/// split of the input into feed() calls.
///
/// After a protocol error (what a node would reject: no '$' where a bulk
/// must start, a bad length, a header line without CRLF or longer than
/// 64 KiB) everything, the held-back bytes first, passes through unparsed
/// from then on; the node will reply with an error and close.
class resp_rewriter {
 public:
  /// Throws std::invalid_argument unless factor is finite and > 0.
  explicit resp_rewriter(double factor = 1.0);

  /// Applies to every command completed from now on, including one whose
  /// first bytes were fed already. Throws like the constructor.
  void set_factor(double factor);
  double factor() const noexcept { return factor_; }

  /// Consumes input; appends to output what may be sent on.
  void feed(std::string_view input, std::string& output);

  /// TTL arguments rewritten so far (only while factor() != 1.0).
  std::uint64_t rewritten() const noexcept { return rewritten_; }
  /// Bytes consumed but not yet emitted (part of a command being held back).
  std::size_t buffered() const noexcept { return pending_.size(); }
  /// A protocol error was seen; everything passes through unparsed now.
  bool passthrough() const noexcept { return broken_; }

  /// max(1, llround(ms * factor)), saturating at the largest long long.
  static long long scale(long long ms, double factor);

 private:
  enum class state {
    command_start,
    inline_command,
    array_length,
    bulk_start,
    bulk_length,
    bulk_data
  };
  struct argument {
    std::size_t header = 0;  ///< Offset of its '$' in pending_.
    std::size_t data = 0;    ///< Offset of its first byte in pending_.
    std::size_t length = 0;
  };

  bool take_line(std::string_view input, std::size_t& at, std::string& output);
  void on_array_length(std::string& output);
  void on_bulk_length(std::string& output);
  void on_argument_complete(std::string& output);
  void finish_command(std::string& output);
  void fail(std::string& output);
  std::string_view argument_text(std::size_t index) const;
  bool may_rewrite() const;
  long long ttl_argument() const;  ///< Its index, or -1.
  void emit_command(std::string& output);

  double factor_;
  std::uint64_t rewritten_ = 0;
  state state_ = state::command_start;
  bool broken_ = false;
  bool streaming_ = false;  ///< The current command cannot be rewritten: not held back.
  std::string pending_;     ///< The current command's bytes not yet emitted.
  std::string line_;        ///< The header line being read, after '*' or '$'.
  long long argc_ = 0;
  long long complete_ = 0;           ///< Arguments of the current command read so far.
  long long remaining_ = 0;          ///< Bytes of the current bulk still to read, CRLF included.
  std::vector<argument> arguments_;  ///< Only while !streaming_.
};

}  // namespace redlock::test
