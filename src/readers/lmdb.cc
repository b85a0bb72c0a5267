#include "readers/lmdb.h"

#include <lmdb.h>
#include <sys/stat.h>

#include "core/error.h"

namespace stoker::readers::lmdb {

struct Database::Impl {
  std::string path;
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  std::vector<std::string> keys;

  [[noreturn]] void bad(const std::string& what, int rc) const {
    fail(ErrorKind::kInvalidArgument, "'" + path + "' " + what + ": " + mdb_strerror(rc));
  }
};

namespace {

// A read-only transaction, aborted on every path out.
struct ReadTxn {
  MDB_txn* txn = nullptr;
  ~ReadTxn() {
    if (txn) mdb_txn_abort(txn);
  }
};

}  // namespace

bool available() { return true; }

Database::Database(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    fail(ErrorKind::kNotFound, "LMDB database '" + path + "' does not exist");
  const unsigned flags = MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK | (S_ISDIR(st.st_mode) ? 0 : MDB_NOSUBDIR);
  int rc = mdb_env_create(&impl_->env);
  if (rc) impl_->bad("cannot be opened", rc);
  mdb_env_set_maxreaders(impl_->env, 1024);
  rc = mdb_env_open(impl_->env, path.c_str(), flags, 0664);
  if (rc) {
    mdb_env_close(impl_->env);
    impl_->env = nullptr;
    impl_->bad("is not an LMDB database (or cannot be opened)", rc);
  }
  ReadTxn t;
  rc = mdb_txn_begin(impl_->env, nullptr, MDB_RDONLY, &t.txn);
  if (rc) impl_->bad("cannot be read", rc);
  rc = mdb_dbi_open(t.txn, nullptr, 0, &impl_->dbi);
  if (rc) impl_->bad("has no main database", rc);
  MDB_cursor* cur = nullptr;
  rc = mdb_cursor_open(t.txn, impl_->dbi, &cur);
  if (rc) impl_->bad("cannot be listed", rc);
  MDB_val k, v;
  for (rc = mdb_cursor_get(cur, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT))
    impl_->keys.emplace_back(static_cast<const char*>(k.mv_data), k.mv_size);
  mdb_cursor_close(cur);
  if (rc != MDB_NOTFOUND) impl_->bad("cannot be listed", rc);
}

Database::~Database() {
  if (impl_ && impl_->env) mdb_env_close(impl_->env);
}

const std::string& Database::path() const { return impl_->path; }
int64_t Database::size() const { return static_cast<int64_t>(impl_->keys.size()); }
const std::string& Database::key(int64_t i) const { return impl_->keys[i]; }

void Database::get(int64_t i, std::vector<uint8_t>& value) const {
  ReadTxn t;
  int rc = mdb_txn_begin(impl_->env, nullptr, MDB_RDONLY, &t.txn);
  if (rc) fail(ErrorKind::kIO, "'" + impl_->path + "': cannot begin a read: " + mdb_strerror(rc));
  const std::string& key = impl_->keys[i];
  MDB_val k{key.size(), const_cast<char*>(key.data())}, v;
  rc = mdb_get(t.txn, impl_->dbi, &k, &v);
  if (rc)
    fail(ErrorKind::kIO, "'" + impl_->path + "' key '" + key + "': cannot read the entry (" +
                             mdb_strerror(rc) + "; was the database changed?)");
  const auto* p = static_cast<const uint8_t*>(v.mv_data);
  value.assign(p, p + v.mv_size);
}

}  // namespace stoker::readers::lmdb
