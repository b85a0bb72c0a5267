// Read-only access to an LMDB database by entry index (Caffe and Caffe2 store their data sets
// in LMDB). LMDB is optional: a build without liblmdb compiles lmdb_unavailable.cc instead of
// lmdb.cc, and opening a database then raises "stoker was built without LMDB".
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stoker::readers::lmdb {

bool available();

class Database {
 public:
  // Opens the environment at `path` (a folder with data.mdb, or the data file itself) read-only
  // and lists its keys in LMDB's order. kNotFound when it does not exist; kInvalidArgument when
  // it is not an LMDB database; kUnsupported when stoker was built without LMDB.
  explicit Database(const std::string& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& path() const;
  int64_t size() const;
  const std::string& key(int64_t i) const;
  // The value of entry i, copied into `value`. Thread-safe.
  void get(int64_t i, std::vector<uint8_t>& value) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stoker::readers::lmdb
