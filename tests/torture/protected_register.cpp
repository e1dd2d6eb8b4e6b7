#include "protected_register.hpp"

#include <redlock/fencing.hpp>

#include <charconv>
#include <exception>
#include <optional>
#include <stdexcept>
#include <thread>

namespace redlock::torture {
namespace {

std::int64_t parse_counter(const std::optional<std::string>& text) {
  if (!text) return 0;
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc{} || ptr != text->data() + text->size()) {
    throw std::runtime_error("protected register holds a non-number: " + *text);
  }
  return value;
}

// A critical-section event of `res` under `token`, stamped now.
event section_event(event_type type, const std::string& res, const std::string& token) {
  event e;
  e.op = op_kind::cs;
  e.type = type;
  e.t = now_ns();
  e.res = res;
  e.token = token;
  return e;
}

void record_failure(worker_history& history, const std::string& res, const std::string& token,
                    const std::exception& error) {
  event e = section_event(event_type::fail, res, token);
  e.err = error.what();
  history.record(std::move(e));
}

}  // namespace

protected_register::protected_register(std::uint16_t store_port) : store_(store_port) {}

protected_register::open_section protected_register::begin(worker_history& history,
                                                           const lock& held) {
  open_section section{held.resource(), held.token(), 0, static_cast<std::int64_t>(held.fence())};
  auto invoke = section_event(event_type::invoke, section.res, section.token);
  invoke.fence = section.fence;
  history.record(std::move(invoke));
  try {
    section.read = parse_counter(store_.get(key(section.res)));
  } catch (const std::exception& error) {
    record_failure(history, section.res, section.token, error);
    throw;
  }
  return section;
}

void protected_register::end(worker_history& history, const open_section& section) {
  const std::int64_t wrote = section.read + 1;
  const std::int64_t write_t = now_ns();
  try {
    const auto reply = store_.command({"SET", key(section.res), std::to_string(wrote)});
    if (reply.type != test::admin_client::reply::kind::status) {
      throw std::runtime_error("SET on the store answered: " + reply.text);
    }
  } catch (const std::exception& error) {
    record_failure(history, section.res, section.token, error);
    throw;
  }
  event e = section_event(event_type::ok, section.res, section.token);
  e.read = section.read;
  e.wrote = wrote;
  e.fence = section.fence;
  e.write_t = write_t;
  history.record(std::move(e));
}

bool protected_register::fenced_set(const open_section& section, const std::string& data_key,
                                    const std::string& value) {
  const auto reply = store_.command(fenced_set_command(fence_key(section.res), data_key,
                                                       static_cast<std::uint64_t>(section.fence),
                                                       section.token, value));
  if (reply.type != test::admin_client::reply::kind::array || reply.elements.size() != 2 ||
      reply.elements[0].type != test::admin_client::reply::kind::integer) {
    throw std::runtime_error("the fenced write on the store answered: " + reply.text);
  }
  return reply.elements[0].integer == 1;
}

std::optional<protected_register::open_section> protected_register::begin_fenced(
    worker_history& history, const lock& held) {
  open_section section{held.resource(), held.token(), 0, static_cast<std::int64_t>(held.fence())};
  bool claimed = false;
  try {
    claimed = fenced_set(section, claim_key(section.res), section.token);
  } catch (const std::exception& error) {
    history.record(section_event(event_type::invoke, section.res, section.token));
    record_failure(history, section.res, section.token, error);
    throw;
  }
  auto invoke = section_event(event_type::invoke, section.res, section.token);
  invoke.fence = section.fence;
  invoke.checked = true;
  history.record(std::move(invoke));
  if (!claimed) {
    event e = section_event(event_type::fail, section.res, section.token);
    e.err = std::string(refused_section);
    e.fence = section.fence;
    e.checked = true;
    history.record(std::move(e));
    return std::nullopt;
  }
  try {
    section.read = parse_counter(store_.get(key(section.res)));
  } catch (const std::exception& error) {
    record_failure(history, section.res, section.token, error);
    throw;
  }
  return section;
}

void protected_register::end_fenced(worker_history& history, const open_section& section) {
  const std::int64_t wrote = section.read + 1;
  const std::int64_t write_t = now_ns();
  bool written = false;
  try {
    written = fenced_set(section, key(section.res), std::to_string(wrote));
  } catch (const std::exception& error) {
    record_failure(history, section.res, section.token, error);
    throw;
  }
  event e = section_event(written ? event_type::ok : event_type::fail, section.res, section.token);
  e.fence = section.fence;
  e.write_t = write_t;
  e.checked = true;
  if (written) {
    e.read = section.read;
    e.wrote = wrote;
  } else {
    e.err = std::string(refused_section);
  }
  history.record(std::move(e));
}

void protected_register::give_up(worker_history& history, const open_section& section) {
  event e = section_event(event_type::fail, section.res, section.token);
  e.err = std::string(given_up_section);
  history.record(std::move(e));
}

bool protected_register::wait_for_other_write(const open_section& section,
                                              std::chrono::milliseconds max) {
  const auto deadline = std::chrono::steady_clock::now() + max;
  while (parse_counter(store_.get(key(section.res))) == section.read) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

std::int64_t protected_register::value(const std::string& res) {
  return parse_counter(store_.get(key(res)));
}

}  // namespace redlock::torture
