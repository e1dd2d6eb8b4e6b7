// The run's record: what each client did (one history file per process),
// what the controller injected (the fault log) and what it found on the
// nodes (the check log). All times are nanoseconds on redlock::clock
// (CLOCK_BOOTTIME), one clock for every process on the host.
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace redlock::torture {

/// Now on redlock::clock, in nanoseconds.
std::int64_t now_ns();

enum class op_kind { acquire, extend, release, cs };
enum class event_type { invoke, ok, fail };

std::string_view name(op_kind op);

/// The err of a cs fail that left the register untouched on purpose.
inline constexpr std::string_view given_up_section = "given up";
/// The err of a cs fail whose fenced write (or claim) the resource refused
/// as stale: the register is untouched.
inline constexpr std::string_view refused_section = "refused";
std::string_view name(event_type type);

/// One line of a client's history.
struct event {
  int proc = 0;
  int worker = 0;  ///< The worker (thread) of the process that did it.
  op_kind op = op_kind::acquire;
  event_type type = event_type::invoke;
  std::int64_t t = 0;
  std::string res;
  std::string token;          ///< The lock's token (extend, release, cs; acquire ok).
  std::int64_t deadline = 0;  ///< acquire/extend ok: the validity deadline (ns).
  std::int64_t ttl_ms = 0;    ///< acquire/extend invoke: the TTL asked for.
  std::int64_t read = -1;     ///< cs ok: the register value read.
  std::int64_t wrote = -1;    ///< cs ok: the value written.
  /// acquire ok of a fenced lock: lock::fence(); cs ok and fail: the fence
  /// of the lock the section ran under (0: not fenced).
  std::int64_t fence = 0;
  /// cs ok and fail: when the write was sent to the store (0: not recorded).
  std::int64_t write_t = 0;
  /// cs: the write went through the resource's fence check
  /// (fenced_set_script), not a plain SET.
  bool checked = false;
  std::string err;  ///< fail: what went wrong.
};

/// One line of the controller's fault log. Markers use node -1: "start"
/// (the clients begin), "heal-all" (every fault is gone), "end" (the
/// clients have stopped).
struct fault_event {
  std::int64_t t = 0;
  std::string fault;
  int node = -1;
  std::string detail;
};

/// One line of the controller's check log: "no-ttl" (a lock key without
/// expiry, value = its PTTL), "leftover" (a lock key still there after the
/// heal and a maximum TTL, value = its PTTL), "scan" (a node was scanned,
/// value = lock keys seen), "key" (a lock key seen by a scan, with its token,
/// value = its PTTL), "register" (final value of a protected register;
/// key = the resource).
struct check_event {
  std::int64_t t = 0;
  std::string check;
  int node = -1;
  std::string key;
  std::int64_t value = 0;
  std::string token;  ///< "key": the value stored under the key.
};

/// An event stamped now.
event make_event(op_kind op, event_type type, const std::string& res,
                 const std::string& token = {});

std::string to_json(const event& e);
std::string to_json(const fault_event& f);
std::string to_json(const check_event& c);

/// Appends lines to a file, buffered; flush() or destruction writes them.
class jsonl_file {
 public:
  /// Creates or truncates `path`; throws std::runtime_error.
  explicit jsonl_file(const std::filesystem::path& path);
  ~jsonl_file();
  jsonl_file(const jsonl_file&) = delete;
  jsonl_file& operator=(const jsonl_file&) = delete;

  void write(std::string_view line);
  /// Throws std::runtime_error if the data could not be written.
  void flush();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
};

/// A client process's history file; stamps every event with the process
/// number. Thread-safe: the workers of a process share it.
class history_writer {
 public:
  history_writer(const std::filesystem::path& dir, int proc);
  void record(event e);
  void flush();
  int proc() const { return proc_; }

 private:
  int proc_;
  std::mutex mutex_;
  jsonl_file file_;
};

/// One worker's view of its process's history: stamps its events with the
/// worker number.
class worker_history {
 public:
  worker_history(history_writer& file, int worker) : file_(&file), worker_(worker) {}
  void record(event e) {
    e.worker = worker_;
    file_->record(std::move(e));
  }
  int worker() const { return worker_; }

 private:
  history_writer* file_;
  int worker_;
};

std::filesystem::path history_path(const std::filesystem::path& dir, int proc);
std::filesystem::path fault_log_path(const std::filesystem::path& dir);
std::filesystem::path check_log_path(const std::filesystem::path& dir);

/// Everything a run directory holds.
struct run_data {
  std::vector<event> events;  ///< Every process's history, each in its own order.
  std::vector<fault_event> faults;
  std::vector<check_event> checks;

  /// Time of the first fault-log marker with this name.
  std::optional<std::int64_t> marker(std::string_view name) const;
};

/// Reads client-*.jsonl, faults.jsonl and checks.jsonl of `dir` (the last two
/// may be missing). Throws std::runtime_error naming the file and line of
/// anything malformed.
run_data load_run(const std::filesystem::path& dir);

}  // namespace redlock::torture
