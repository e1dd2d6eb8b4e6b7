#include "history.hpp"

#include "json_line.hpp"

#include <redlock/clock.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace redlock::torture {
namespace {

std::optional<op_kind> parse_op(std::string_view text) {
  for (const auto op : {op_kind::acquire, op_kind::extend, op_kind::release, op_kind::cs}) {
    if (name(op) == text) return op;
  }
  return std::nullopt;
}

std::optional<event_type> parse_type(std::string_view text) {
  for (const auto type : {event_type::invoke, event_type::ok, event_type::fail}) {
    if (name(type) == text) return type;
  }
  return std::nullopt;
}

// Calls `line_fn(object, where)` for every non-empty line of `path`.
template <class LineFn>
void read_jsonl(const std::filesystem::path& path, LineFn line_fn) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(fmt::format("cannot read {}", path.string()));
  std::string line;
  std::string error;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    const auto where = fmt::format("{}:{}", path.string(), number);
    auto object = parse_json_line(line, error);
    if (!object) throw std::runtime_error(fmt::format("{}: {}", where, error));
    line_fn(*object, where);
  }
}

event event_from(const json_object& o, const std::string& where) {
  event e;
  const auto op = parse_op(o.text("op"));
  const auto type = parse_type(o.text("type"));
  if (!op || !type || !o.has("t") || !o.has("proc")) {
    throw std::runtime_error(fmt::format("{}: not a history event", where));
  }
  e.proc = static_cast<int>(o.integer("proc"));
  e.worker = static_cast<int>(o.integer("worker"));
  e.op = *op;
  e.type = *type;
  e.t = o.integer("t");
  e.res = o.text("res");
  e.token = o.text("token");
  e.deadline = o.integer("deadline");
  e.ttl_ms = o.integer("ttl");
  e.read = o.integer("read", -1);
  e.wrote = o.integer("wrote", -1);
  e.err = o.text("err");
  e.fence = o.integer("fence");
  e.write_t = o.integer("write_t");
  e.checked = o.integer("checked") != 0;
  return e;
}

}  // namespace

std::int64_t now_ns() { return redlock::clock::now().time_since_epoch().count(); }

event make_event(op_kind op, event_type type, const std::string& res, const std::string& token) {
  event e;
  e.op = op;
  e.type = type;
  e.t = now_ns();
  e.res = res;
  e.token = token;
  return e;
}

std::string_view name(op_kind op) {
  switch (op) {
    case op_kind::acquire:
      return "acquire";
    case op_kind::extend:
      return "extend";
    case op_kind::release:
      return "release";
    case op_kind::cs:
      return "cs";
  }
  return "?";
}

std::string_view name(event_type type) {
  switch (type) {
    case event_type::invoke:
      return "invoke";
    case event_type::ok:
      return "ok";
    case event_type::fail:
      return "fail";
  }
  return "?";
}

std::string to_json(const event& e) {
  json_writer w;
  w.field("proc", e.proc).field("worker", e.worker);
  w.field("op", name(e.op)).field("type", name(e.type)).field("t", e.t);
  w.field("res", e.res);
  if (!e.token.empty()) w.field("token", e.token);
  if (e.deadline != 0) w.field("deadline", e.deadline);
  if (e.ttl_ms != 0) w.field("ttl", e.ttl_ms);
  if (e.read >= 0) w.field("read", e.read);
  if (e.wrote >= 0) w.field("wrote", e.wrote);
  if (e.fence != 0) w.field("fence", e.fence);
  if (e.write_t != 0) w.field("write_t", e.write_t);
  if (e.checked) w.field("checked", 1);
  if (!e.err.empty()) w.field("err", e.err);
  return w.str();
}

std::string to_json(const fault_event& f) {
  json_writer w;
  w.field("t", f.t).field("fault", f.fault).field("node", f.node);
  if (!f.detail.empty()) w.field("detail", f.detail);
  return w.str();
}

std::string to_json(const check_event& c) {
  json_writer w;
  w.field("t", c.t).field("check", c.check).field("node", c.node);
  if (!c.key.empty()) w.field("key", c.key);
  if (!c.token.empty()) w.field("token", c.token);
  w.field("value", c.value);
  return w.str();
}

jsonl_file::jsonl_file(const std::filesystem::path& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "w");
  if (file_ == nullptr) {
    throw std::runtime_error(
        fmt::format("cannot create {}: {}", path.string(), std::strerror(errno)));
  }
}

jsonl_file::~jsonl_file() {
  if (file_ != nullptr) std::fclose(file_);
}

void jsonl_file::write(std::string_view line) {
  std::fwrite(line.data(), 1, line.size(), file_);
  std::fputc('\n', file_);
}

void jsonl_file::flush() {
  if (std::fflush(file_) != 0 || std::ferror(file_) != 0) {
    throw std::runtime_error(
        fmt::format("cannot write {}: {}", path_.string(), std::strerror(errno)));
  }
}

history_writer::history_writer(const std::filesystem::path& dir, int proc)
    : proc_(proc), file_(history_path(dir, proc)) {}

void history_writer::record(event e) {
  e.proc = proc_;
  const auto line = to_json(e);
  const std::lock_guard guard(mutex_);
  file_.write(line);
}

void history_writer::flush() {
  const std::lock_guard guard(mutex_);
  file_.flush();
}

std::filesystem::path history_path(const std::filesystem::path& dir, int proc) {
  return dir / fmt::format("client-{}.jsonl", proc);
}

std::filesystem::path fault_log_path(const std::filesystem::path& dir) {
  return dir / "faults.jsonl";
}

std::filesystem::path check_log_path(const std::filesystem::path& dir) {
  return dir / "checks.jsonl";
}

std::optional<std::int64_t> run_data::marker(std::string_view marker_name) const {
  for (const auto& f : faults) {
    if (f.node < 0 && f.fault == marker_name) return f.t;
  }
  return std::nullopt;
}

run_data load_run(const std::filesystem::path& dir) {
  run_data run;
  std::vector<std::filesystem::path> histories;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const auto file = entry.path().filename().string();
    if (file.starts_with("client-") && file.ends_with(".jsonl")) histories.push_back(entry.path());
  }
  std::sort(histories.begin(), histories.end());
  for (const auto& path : histories) {
    read_jsonl(path, [&](const json_object& o, const std::string& where) {
      run.events.push_back(event_from(o, where));
    });
  }
  if (std::filesystem::exists(fault_log_path(dir))) {
    read_jsonl(fault_log_path(dir), [&](const json_object& o, const std::string& where) {
      if (!o.has("t") || !o.has("fault")) {
        throw std::runtime_error(fmt::format("{}: not a fault event", where));
      }
      run.faults.push_back({o.integer("t"), o.text("fault"),
                            static_cast<int>(o.integer("node", -1)), o.text("detail")});
    });
  }
  if (std::filesystem::exists(check_log_path(dir))) {
    read_jsonl(check_log_path(dir), [&](const json_object& o, const std::string& where) {
      if (!o.has("check")) throw std::runtime_error(fmt::format("{}: not a check event", where));
      run.checks.push_back({o.integer("t"), o.text("check"),
                            static_cast<int>(o.integer("node", -1)), o.text("key"),
                            o.integer("value"), o.text("token")});
    });
  }
  return run;
}

}  // namespace redlock::torture
