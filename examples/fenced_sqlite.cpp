// fenced_sqlite: the resource side of fencing tokens in SQL, against SQLite.
// Needs no lock nodes: it plays the holders itself.
//
//   fenced_sqlite                        two holders, in memory: holder A writes
//                                        with fence 5, holder B with fence 7, then
//                                        A comes back late with 5 and is refused;
//                                        exits 1 if the database accepted a stale
//                                        write (what the tests check)
//   fenced_sqlite DB ID BALANCE FENCE TOKEN
//                                        one fenced write of account ID in the
//                                        SQLite file DB (created if needed);
//                                        exits 0 when written, 3 when refused
//
// In an application the fence and the token come from a fenced lock
// (docs/usage.md, "Fencing tokens"):
//
//   redlock::lock_options options;
//   options.fenced = true;
//   redlock::lock held = co_await locks.async_acquire("account:42", options,
//                                                     boost::asio::use_awaitable);
//   ... compute the new balance (the holder may pause here for any time) ...
//   if (!update_fenced(db, 42, balance, held.fence(), held.token())) {
//     // refused: a later holder has written; this one's lease is over.
//   }
//
// The lock orders the holders (a later acquire gets a larger fence); the
// WHERE clause below is what refuses the one that acts after its lease ended.
#include <fmt/core.h>
#include <sqlite3.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace {

// The three statements of docs/usage.md. Each is one statement: the check
// and the write are one atomic step in the database, so no other writer
// can come between them.
//
// 1. One write per fence: a tie is refused too.
constexpr const char* update_sql =
    "UPDATE accounts SET balance = ?1, fence = ?2 WHERE id = ?3 AND fence < ?2";
// 2. The holder may write several times with its fence; an equal fence of
//    another holder (token) is refused.
constexpr const char* update_owned_sql =
    "UPDATE accounts SET balance = ?1, fence = ?2, fence_owner = ?4 "
    "WHERE id = ?3 AND (fence < ?2 OR (fence = ?2 AND fence_owner = ?4))";
// 3. Insert, or update only with a larger fence.
constexpr const char* upsert_sql =
    "INSERT INTO jobs (id, state, fence) VALUES (?3, ?1, ?2) "
    "ON CONFLICT (id) DO UPDATE SET state = excluded.state, fence = excluded.fence "
    "WHERE jobs.fence < excluded.fence";

constexpr const char* schema_sql =
    "CREATE TABLE IF NOT EXISTS accounts ("
    "  id INTEGER PRIMARY KEY, balance INTEGER NOT NULL,"
    "  fence INTEGER NOT NULL DEFAULT 0, fence_owner TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE IF NOT EXISTS jobs ("
    "  id TEXT PRIMARY KEY, state TEXT NOT NULL, fence INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO accounts (id, balance) VALUES (42, 0);";

[[noreturn]] void fail(sqlite3* db, const char* what) {
  throw std::runtime_error(fmt::format("{}: {}", what, sqlite3_errmsg(db)));
}

/// A prepared statement, finalized on every exit path.
class statement {
 public:
  statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &handle_, nullptr) != SQLITE_OK) fail(db, "prepare");
  }
  ~statement() { sqlite3_finalize(handle_); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  // SQLite compares INTEGER columns with integer parameters: bind numbers as
  // numbers (a number bound as text never compares less than one).
  statement& bind(int index, std::int64_t value) {
    if (sqlite3_bind_int64(handle_, index, value) != SQLITE_OK) fail(db_, "bind");
    return *this;
  }
  statement& bind(int index, const std::string& value) {
    if (sqlite3_bind_text(handle_, index, value.c_str(), -1, SQLITE_TRANSIENT) != SQLITE_OK) {
      fail(db_, "bind");
    }
    return *this;
  }

  /// Runs it; true when it changed a row: the write went ahead. False when
  /// the WHERE clause refused the fence.
  bool written() {
    if (sqlite3_step(handle_) != SQLITE_DONE) fail(db_, "step");
    return sqlite3_changes(db_) == 1;
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* handle_ = nullptr;
};

/// Statement 1 for account `id`.
bool update_once(sqlite3* db, std::int64_t id, std::int64_t balance, std::int64_t fence) {
  return statement(db, update_sql).bind(1, balance).bind(2, fence).bind(3, id).written();
}

/// Statement 2 for account `id`: what an application holding a fenced lock
/// runs for each write (`fence` = lock::fence(), `token` = lock::token()).
bool update_fenced(sqlite3* db, std::int64_t id, std::int64_t balance, std::int64_t fence,
                   const std::string& token) {
  return statement(db, update_owned_sql)
      .bind(1, balance)
      .bind(2, fence)
      .bind(3, id)
      .bind(4, token)
      .written();
}

/// Statement 3 for job `id`.
bool upsert_job(sqlite3* db, const std::string& id, const std::string& state, std::int64_t fence) {
  return statement(db, upsert_sql).bind(1, state).bind(2, fence).bind(3, id).written();
}

std::string query_text(sqlite3* db, const char* sql) {
  sqlite3_stmt* query = nullptr;
  if (sqlite3_prepare_v2(db, sql, -1, &query, nullptr) != SQLITE_OK) fail(db, "prepare");
  std::string out;
  if (sqlite3_step(query) == SQLITE_ROW) {
    const auto* text = sqlite3_column_text(query, 0);
    if (text != nullptr) out = reinterpret_cast<const char*>(text);
  }
  sqlite3_finalize(query);
  return out;
}

int failures = 0;

void expect(bool actual, bool wanted, const std::string& what) {
  fmt::print("{:<62} {}\n", what, actual ? "written" : "refused");
  if (actual != wanted) {
    fmt::print("  WRONG: expected {}\n", wanted ? "written" : "refused");
    ++failures;
  }
}

void expect_value(const std::string& actual, const std::string& wanted, const std::string& what) {
  fmt::print("{:<62} {}\n", what, actual);
  if (actual != wanted) {
    fmt::print("  WRONG: expected {}\n", wanted);
    ++failures;
  }
}

/// Holder A (fence 5) and holder B (fence 7) of the lock on account 42 and
/// on job "nightly", and A writing again after B took over.
int simulate(sqlite3* db) {
  fmt::print("-- 1. UPDATE ... WHERE fence < $f\n");
  expect(update_once(db, 42, 100, 5), true, "A (fence 5) sets balance 100");
  expect(update_once(db, 42, 80, 7), true, "B (fence 7) sets balance 80");
  expect(update_once(db, 42, 90, 5), false, "A, late, (fence 5) sets 90");
  expect(update_once(db, 42, 70, 7), false, "B again with fence 7 (no tie-break)");
  expect_value(query_text(db, "SELECT balance || ' @ ' || fence FROM accounts WHERE id = 42"),
               "80 @ 7", "balance @ fence");

  fmt::print("-- 2. ... AND (fence < $f OR (fence = $f AND fence_owner = $token))\n");
  expect(update_fenced(db, 42, 60, 8, "token-b"), true, "B (fence 8, token-b) sets 60");
  expect(update_fenced(db, 42, 55, 8, "token-b"), true, "B (fence 8, token-b) writes again");
  expect(update_fenced(db, 42, 50, 8, "token-c"), false, "C (fence 8, token-c) sets 50");
  expect(update_fenced(db, 42, 45, 7, "token-b"), false, "B with an older fence 7");
  expect_value(query_text(db,
                          "SELECT balance || ' @ ' || fence || ' by ' || fence_owner "
                          "FROM accounts WHERE id = 42"),
               "55 @ 8 by token-b", "balance @ fence by owner");

  fmt::print("-- 3. INSERT ... ON CONFLICT (id) DO UPDATE ... WHERE fence < excluded.fence\n");
  expect(upsert_job(db, "nightly", "started", 5), true, "A (fence 5) inserts job");
  expect(upsert_job(db, "nightly", "restarted", 7), true, "B (fence 7) updates job");
  expect(upsert_job(db, "nightly", "done", 5), false, "A, late, (fence 5) updates");
  expect_value(query_text(db, "SELECT state || ' @ ' || fence FROM jobs WHERE id = 'nightly'"),
               "restarted @ 7", "job state @ fence");

  if (failures > 0) {
    fmt::print("{} wrong answers: the database accepted a stale write\n", failures);
    return 1;
  }
  fmt::print("every stale write was refused\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 1 && argc != 6) {
    fmt::print(stderr, "usage: fenced_sqlite\n       fenced_sqlite DB ID BALANCE FENCE TOKEN\n");
    return 2;
  }
  const char* path = argc == 6 ? argv[1] : ":memory:";
  sqlite3* db = nullptr;
  if (sqlite3_open(path, &db) != SQLITE_OK) {
    fmt::print(stderr, "cannot open {}: {}\n", path, sqlite3_errmsg(db));
    sqlite3_close(db);
    return 2;
  }
  int status = 0;
  try {
    if (sqlite3_exec(db, schema_sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(db, "schema");
    if (argc == 1) {
      status = simulate(db);
    } else {
      const std::int64_t id = std::stoll(argv[2]);
      const std::int64_t balance = std::stoll(argv[3]);
      const std::int64_t fence = std::stoll(argv[4]);
      if (sqlite3_exec(
              db,
              fmt::format("INSERT OR IGNORE INTO accounts (id, balance) VALUES ({}, 0)", id)
                  .c_str(),
              nullptr, nullptr, nullptr) != SQLITE_OK) {
        fail(db, "insert");
      }
      const bool written = update_fenced(db, id, balance, fence, argv[5]);
      fmt::print("{}\n", written ? "written" : "refused");
      status = written ? 0 : 3;
    }
  } catch (const std::exception& e) {
    fmt::print(stderr, "fenced_sqlite: {}\n", e.what());
    status = 2;
  }
  sqlite3_close(db);
  return status;
}
