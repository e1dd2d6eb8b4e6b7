#include "detail/quorum_fsm.hpp"

#include <algorithm>

namespace redlock::detail {

using status = node_outcome::status;

clock::duration drift_allowance(std::chrono::milliseconds ttl, double drift_factor) noexcept {
  const auto scaled = std::chrono::duration<double, std::milli>(ttl.count() * drift_factor);
  return std::chrono::duration_cast<clock::duration>(scaled) + std::chrono::milliseconds(2);
}

quorum_fsm::quorum_fsm(std::size_t nodes, round_rules rules)
    : rules_(rules),
      drift_(rules.drop_drift ? clock::duration::zero()
                              : drift_allowance(rules.ttl, rules.drift_factor)),
      outcomes_(nodes) {}

void quorum_fsm::start(clock::time_point start) {
  std::fill(outcomes_.begin(), outcomes_.end(), node_outcome{});
  start_ = start;
  validity_deadline_ = {};
  elapsed_ = {};
  granted_ = refused_ = failed_ = 0;
  state_ = state::pending;
  error_ = {};
}

bool quorum_fsm::accepts(std::size_t node) const noexcept {
  return state_ == state::pending && node < outcomes_.size() &&
         outcomes_[node].state == status::pending;
}

quorum_fsm::state quorum_fsm::on_granted(std::size_t node, clock::time_point now) {
  if (!accepts(node)) return state_;
  outcomes_[node].state = status::acquired;
  ++granted_;
  return decide(now);
}

quorum_fsm::state quorum_fsm::on_refused(std::size_t node, clock::time_point now) {
  if (!accepts(node)) return state_;
  outcomes_[node].state = status::held_elsewhere;
  ++refused_;
  return decide(now);
}

quorum_fsm::state quorum_fsm::on_failed(std::size_t node, error_code error, clock::time_point now) {
  if (!accepts(node)) return state_;
  outcomes_[node] = {status::failed, error};
  ++failed_;
  return decide(now);
}

quorum_fsm::state quorum_fsm::on_vote(std::size_t node, const vote& v, clock::time_point now) {
  switch (v.what) {
    case vote::kind::granted:
      return on_granted(node, now);
    case vote::kind::refused:
      return on_refused(node, now);
    case vote::kind::failed:
      break;
  }
  return on_failed(node, v.error, now);
}

quorum_fsm::state quorum_fsm::on_timeout(clock::time_point now) {
  if (state_ != state::pending) return state_;
  for (auto& outcome : outcomes_) {
    if (outcome.state == status::pending) {
      outcome = {status::failed, make_error_code(errc::node_timeout)};
      ++failed_;
    }
  }
  return decide(now);
}

quorum_fsm::state quorum_fsm::abandon(error_code error) {
  if (state_ != state::pending) return state_;
  for (auto& outcome : outcomes_) {
    if (outcome.state == status::pending) {
      outcome = {status::failed, error};
      ++failed_;
    }
  }
  error_ = error;
  state_ = state::failed;
  return state_;
}

quorum_fsm::state quorum_fsm::decide(clock::time_point now) {
  if (granted_ >= quorum()) {
    elapsed_ = now - start_;
    validity_deadline_ = start_ + rules_.ttl - drift_;
    const auto validity = validity_deadline_ - now;
    if (now >= rules_.hard_deadline) {
      error_ = make_error_code(errc::lock_expired);
      state_ = state::failed;
    } else if (validity <= clock::duration::zero() || validity < rules_.min_validity) {
      error_ = make_error_code(errc::validity_expired);
      state_ = state::failed;
    } else {
      state_ = state::reached;
    }
    return state_;
  }
  // Fail as soon as the nodes that have not said no can no longer make a majority.
  const auto spare = nodes() - quorum();
  if (refused_ + failed_ > spare) {
    const auto out = ruled_out();
    if (rules_.prove_refusals && out <= spare && out + open_pending() > spare &&
        now < rules_.hard_deadline) {
      return state_;
    }
    error_ = now >= rules_.hard_deadline ? make_error_code(errc::lock_expired) : failure_cause(out);
    state_ = state::failed;
  }
  return state_;
}

bool quorum_fsm::never_holds(std::size_t node) const noexcept {
  return node < 64 && ((rules_.never_holders >> node) & 1U) != 0;
}

std::size_t quorum_fsm::ruled_out() const noexcept {
  std::size_t out = 0;
  for (std::size_t i = 0; i < outcomes_.size(); ++i) {
    const auto s = outcomes_[i].state;
    if (s == status::held_elsewhere || (never_holds(i) && s != status::acquired)) ++out;
  }
  return out;
}

std::size_t quorum_fsm::open_pending() const noexcept {
  std::size_t open = 0;
  for (std::size_t i = 0; i < outcomes_.size(); ++i) {
    if (outcomes_[i].state == status::pending && !never_holds(i)) ++open;
  }
  return open;
}

error_code quorum_fsm::failure_cause(std::size_t ruled_out) const {
  const auto spare = nodes() - quorum();
  if (rules_.prove_refusals && ruled_out > spare) return make_error_code(rules_.refusal_error);
  // Failures alone would have sunk the round: the nodes are the problem.
  // When most of them failed with one configuration error (wrong
  // credentials, a node that is no independent master, a certificate that
  // does not verify), name it.
  if (failed_ > spare) {
    for (const errc cause :
         {errc::authentication_failed, errc::replica_node, errc::cluster_node, errc::same_server}) {
      const auto code = make_error_code(cause);
      const auto count = std::count_if(outcomes_.begin(), outcomes_.end(), [&](const auto& o) {
        return o.state == status::failed && o.error == code;
      });
      if (2 * static_cast<std::size_t>(count) > failed_) return code;
    }
    // Certificates that do not verify: the first one's cause stands for them.
    const auto is_tls = [](const auto& o) {
      return o.state == status::failed && o.error.category() == tls_verify_category();
    };
    const auto tls_failures = std::count_if(outcomes_.begin(), outcomes_.end(), is_tls);
    if (2 * static_cast<std::size_t>(tls_failures) > failed_) {
      return std::find_if(outcomes_.begin(), outcomes_.end(), is_tls)->error;
    }
    return make_error_code(errc::quorum_unreachable);
  }
  if (ruled_out > spare) return make_error_code(rules_.refusal_error);
  return make_error_code(rules_.mixed_error);
}

}  // namespace redlock::detail
