// fenced_set_script(): the resource-side check for a resource kept in Redis,
// run with EVAL on a real redis-server.
#include "test_env.hpp"

#include <redlock/fencing.hpp>

#include <cstdint>
#include <string>
#include <vector>

// Named, so that a unity build can merge this file with the other tests.
namespace fencing_itest {

using namespace redlock::itest;
using redlock::fenced_set_command;
using redlock::max_script_fence;
using redlock::test::admin_client;

namespace {

/// One redis-server and an admin connection to it.
struct resource_store {
  resource_store() : server(redlock::test::find_free_port()) {
    server.start();
    admin = std::make_unique<admin_client>(server.port());
  }

  /// Runs the script through fenced_set_command().
  admin_client::reply set(std::uint64_t fence, const std::string& token, const std::string& value) {
    return admin->command(fenced_set_command(fence_key, data_key, fence, token, value));
  }
  /// Runs the script with a fence given as text, as any client could.
  admin_client::reply set_raw(const std::string& fence, const std::string& token,
                              const std::string& value) {
    return admin->command({"EVAL", std::string(redlock::fenced_set_script()), "2", fence_key,
                           data_key, fence, token, value});
  }

  redlock::test::redis_server server;
  std::unique_ptr<admin_client> admin;
  // Keys in one hash slot, as Redis Cluster needs.
  std::string fence_key = "{account:42}:fence";
  std::string data_key = "{account:42}";
};

/// {1, fence}: written.
bool written(const admin_client::reply& r, long long fence) {
  return r.type == admin_client::reply::kind::array && r.elements.size() == 2 &&
         r.elements[0].integer == 1 && r.elements[1].integer == fence;
}

/// {0, recorded}: refused as stale.
bool refused(const admin_client::reply& r, long long recorded) {
  return r.type == admin_client::reply::kind::array && r.elements.size() == 2 &&
         r.elements[0].integer == 0 && r.elements[1].integer == recorded;
}

std::string describe(const admin_client::reply& r) {
  switch (r.type) {
    case admin_client::reply::kind::array: {
      std::string out = "[";
      for (const auto& e : r.elements) out += describe(e) + " ";
      return out + "]";
    }
    case admin_client::reply::kind::integer:
      return std::to_string(r.integer);
    case admin_client::reply::kind::nil:
      return "(nil)";
    default:
      return "\"" + r.text + "\"";
  }
}

}  // namespace

TEST_CASE("fenced set: a larger fence writes, a smaller one is refused", "[integration][fencing]") {
  resource_store store;
  auto r = store.set(5, "holder-a", "balance=100");
  INFO(describe(r));
  CHECK(written(r, 5));
  CHECK(store.admin->get(store.data_key) == "balance=100");
  CHECK(store.admin->get(store.fence_key) == "5 holder-a");

  r = store.set(7, "holder-b", "balance=80");
  INFO(describe(r));
  CHECK(written(r, 7));
  CHECK(store.admin->get(store.data_key) == "balance=80");

  // holder-a, paused past its lease, writes late with its old fence.
  r = store.set(5, "holder-a", "balance=90");
  INFO(describe(r));
  CHECK(refused(r, 7));
  r = store.set(6, "holder-c", "balance=70");
  INFO(describe(r));
  CHECK(refused(r, 7));
  CHECK(store.admin->get(store.data_key) == "balance=80");
  CHECK(store.admin->get(store.fence_key) == "7 holder-b");
  // Neither key gets a TTL.
  CHECK(store.admin->pttl(store.fence_key) == -1);
  CHECK(store.admin->pttl(store.data_key) == -1);
}

TEST_CASE("fenced set: an equal fence rewrites for the same token only", "[integration][fencing]") {
  resource_store store;
  REQUIRE(written(store.set(9, "holder-a", "v1"), 9));

  auto r = store.set(9, "holder-a", "v2");  // the holder resends or writes again
  INFO(describe(r));
  CHECK(written(r, 9));
  CHECK(store.admin->get(store.data_key) == "v2");

  r = store.set(9, "holder-b", "v3");  // another holder with an equal fence
  INFO(describe(r));
  CHECK(refused(r, 9));
  CHECK(store.admin->get(store.data_key) == "v2");
  CHECK(store.admin->get(store.fence_key) == "9 holder-a");

  // A token with spaces is compared whole.
  REQUIRE(written(store.set(10, "a b", "v4"), 10));
  CHECK(written(store.set(10, "a b", "v5"), 10));
  CHECK(refused(store.set(10, "a", "v6"), 10));
  CHECK(store.admin->get(store.data_key) == "v5");
}

TEST_CASE("fenced set: a missing fence record accepts any fence", "[integration][fencing]") {
  resource_store store;
  // Data written before fencing was introduced, no record yet.
  store.admin->command({"SET", store.data_key, "legacy"});
  auto r = store.set(1, "holder-a", "v1");
  INFO(describe(r));
  CHECK(written(r, 1));
  CHECK(store.admin->get(store.data_key) == "v1");

  // The record lost (this is what the resource must never allow: the
  // next write is accepted whatever its fence).
  REQUIRE(written(store.set(50, "holder-b", "v2"), 50));
  store.admin->command({"DEL", store.fence_key});
  r = store.set(3, "holder-c", "v3");
  INFO(describe(r));
  CHECK(written(r, 3));
  CHECK(store.admin->get(store.fence_key) == "3 holder-c");
}

TEST_CASE("fenced set: fences up to 2^53-1 are exact, larger ones are an error",
          "[integration][fencing]") {
  resource_store store;
  CHECK(max_script_fence == 9007199254740991ULL);
  const auto top = static_cast<long long>(max_script_fence);

  // Neighbours just below the limit are told apart.
  auto r = store.set(max_script_fence - 2, "holder-a", "v1");
  INFO(describe(r));
  CHECK(written(r, top - 2));
  r = store.set(max_script_fence - 1, "holder-b", "v2");
  INFO(describe(r));
  CHECK(written(r, top - 1));
  r = store.set(max_script_fence - 2, "holder-a", "v3");
  INFO(describe(r));
  CHECK(refused(r, top - 1));
  r = store.set(max_script_fence, "holder-c", "v4");
  INFO(describe(r));
  CHECK(written(r, top));
  r = store.set(max_script_fence, "holder-b", "v5");
  INFO(describe(r));
  CHECK(refused(r, top));
  CHECK(store.admin->get(store.data_key) == "v4");

  // Past the limit a double would round (2^53 + 1 == 2^53): refused
  // with an error instead, and nothing written.
  for (const std::string fence :
       {"9007199254740992", "9007199254740993", "18446744073709551615", "99999999999999999999"}) {
    INFO(fence);
    r = store.set_raw(fence, "holder-d", "v6");
    CHECK(r.type == admin_client::reply::kind::error);
  }
  CHECK(store.admin->get(store.data_key) == "v4");
  CHECK(store.admin->get(store.fence_key) == "9007199254740991 holder-c");
}

TEST_CASE("fenced set: a malformed fence or record is an error, nothing written",
          "[integration][fencing]") {
  resource_store store;
  for (const std::string fence : {"0", "", "-1", "1.5", "1e3", " 7", "7 ", "0x10", "007"}) {
    INFO("fence '" << fence << "'");
    const auto r = store.set_raw(fence, "holder-a", "v");
    CHECK(r.type == admin_client::reply::kind::error);
  }
  CHECK_FALSE(store.admin->exists(store.data_key));
  CHECK_FALSE(store.admin->exists(store.fence_key));

  store.admin->command({"SET", store.fence_key, "not a record"});
  auto r = store.set(5, "holder-a", "v");
  INFO(describe(r));
  CHECK(r.type == admin_client::reply::kind::error);
  store.admin->command({"SET", store.fence_key, "12"});  // no token part
  r = store.set(5, "holder-a", "v");
  INFO(describe(r));
  CHECK(r.type == admin_client::reply::kind::error);
  CHECK_FALSE(store.admin->exists(store.data_key));
}

}  // namespace fencing_itest
