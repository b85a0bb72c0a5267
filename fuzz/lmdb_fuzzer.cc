// libFuzzer harness: LMDB data files (readers/lmdb.h), as readers.caffe and readers.caffe2 open
// them: the file is checked (meta pages, then the whole B-tree) and, once accepted, liblmdb
// maps it and every record is read through it.
//
// liblmdb trusts the file it maps, so this harness is the check's oracle: whatever the check
// lets through must be safe for liblmdb to read. liblmdb itself is the system's build, not
// instrumented; a read it makes outside the mapping still ends the process (SIGSEGV, or SIGBUS
// past the end of the file), which libFuzzer reports as a crash, and its assertion failures
// abort.
//
// Input: the data file (data.mdb), written to an in-memory file (memfd) that liblmdb maps
// through its /proc/self/fd path like any file.
// Oracle, beyond crashes and sanitizer reports: opening throws only Error(kInvalidArgument)
// (truncated, damaged, not LMDB); a database that opens reads every record it listed, or throws
// kIO (a key liblmdb cannot find again, possible only where the check cannot order the keys:
// MDB_REVERSEKEY, MDB_INTEGERKEY).
#include <lmdb.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "harness.h"
#include "memfile.h"
#include "readers/lmdb.h"

namespace {

using namespace stoker;
using namespace stoker::readers;

fuzz::MemFile* g_file = nullptr;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  g_file->set(data, size);
  std::unique_ptr<lmdb::Database> db;
  if (!fuzz::expect_ok_or("lmdb::Database", {ErrorKind::kInvalidArgument},
                          [&] { db = std::make_unique<lmdb::Database>(g_file->path()); }))
    return 0;
  std::vector<uint8_t> value;
  for (int64_t i = 0; i < db->size(); ++i) {
    if (!fuzz::expect_ok_or("lmdb::Database::get", {ErrorKind::kIO}, [&] { db->get(i, value); }))
      continue;
    if (value.size() > size) fuzz::finding("a value larger than the whole file was read");
  }
  return 0;
}

namespace {

// A database written by liblmdb itself into a second memfd: `n` records, every sixth on
// overflow pages. Returns the data file's bytes.
std::vector<uint8_t> written_db(int n) {
  fuzz::MemFile f("stoker_fuzz_lmdb_seed");
  MDB_env* env = nullptr;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  if (mdb_env_create(&env) || mdb_env_set_mapsize(env, size_t{1} << 24) ||
      mdb_env_open(env, f.path().c_str(), MDB_NOSUBDIR | MDB_NOLOCK, 0600) ||
      mdb_txn_begin(env, nullptr, 0, &txn) || mdb_dbi_open(txn, nullptr, 0, &dbi))
    fuzz::finding("cannot write a database for the regressions");
  for (int k = 0; k < n; ++k) {
    char key[16];
    std::snprintf(key, sizeof key, "%08d", k);
    std::vector<uint8_t> v(k % 6 == 0 ? 6000 : 40 + 3 * k, static_cast<uint8_t>(k));
    MDB_val mk{std::strlen(key), key}, mv{v.size(), v.data()};
    if (mdb_put(txn, dbi, &mk, &mv, 0)) fuzz::finding("cannot write a record for the regressions");
  }
  if (mdb_txn_commit(txn)) fuzz::finding("cannot commit the regressions' database");
  mdb_env_close(env);
  std::vector<uint8_t> bytes;
  FILE* in = std::fopen(f.path().c_str(), "rb");
  for (int c; in && (c = std::fgetc(in)) != EOF;) bytes.push_back(static_cast<uint8_t>(c));
  if (in) std::fclose(in);
  return bytes;
}

template <typename T>
void store(std::vector<uint8_t>& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

// Damaged databases of the kinds that ended the process inside liblmdb before the check existed
// (issue 18: 127 of 520 damaged copies of a small database); 8 of these 11 did (SIGBUS, SIGFPE,
// SIGSEGV), all are refused now. Made here from a database liblmdb writes.
std::vector<fuzz::Regression> regressions() {
  const std::vector<uint8_t> db = written_db(60);
  const size_t psize = 4096;  // liblmdb's page size is the OS page size, as here
  std::vector<fuzz::Regression> r;
  // Truncated: liblmdb mapped the pages the meta page counts past the end of the file (SIGBUS).
  r.push_back({"lmdb: truncated to 5000 bytes", {db.begin(), db.begin() + 5000}});
  r.push_back({"lmdb: truncated by one byte", {db.begin(), db.end() - 1}});
  r.push_back({"lmdb: truncated to two meta pages", {db.begin(), db.begin() + 2 * psize}});
  // A zero page size in the meta page: liblmdb divided by it (SIGFPE).
  std::vector<uint8_t> b = db;
  store<uint32_t>(b, 16 + 24, 0);
  r.push_back({"lmdb: page size 0", b});
  // A last page far past the file (the map then covers it: SIGBUS at the first read there).
  b = db;
  store<uint64_t>(b, 16 + 120, 1000);
  store<uint64_t>(b, psize + 16 + 120, 1000);
  r.push_back({"lmdb: last page 1000 of a 25-page file", b});
  // In each branch and leaf page: a node offset past the page, and a branch child or a value
  // size far out of range.
  for (size_t pg = 2; pg * psize < db.size(); ++pg) {
    uint64_t pgno;
    uint16_t flags;
    std::memcpy(&pgno, db.data() + pg * psize, 8);
    std::memcpy(&flags, db.data() + pg * psize + 10, 2);
    if (pgno != pg || (flags != 1 && flags != 2)) continue;
    uint16_t first;
    std::memcpy(&first, db.data() + pg * psize + 16, 2);
    b = db;
    store<uint16_t>(b, pg * psize + 16, 0xfff0);  // node 0 past the end of the page
    r.push_back({flags == 1 ? "lmdb: a branch node past its page" : "lmdb: a leaf node past its page", b});
    b = db;
    store<uint16_t>(b, pg * psize + first + 2, 0x7fff);  // hi word: child page or value size
    r.push_back({flags == 1 ? "lmdb: a branch child far past the file" : "lmdb: a value far past its page", b});
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_file = new fuzz::MemFile("stoker_fuzz_lmdb");
  fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
