// Compiled instead of lmdb.cc when liblmdb was not found: the LMDB readers exist and say why
// they cannot run.
#include "readers/lmdb.h"

#include "core/error.h"

namespace stoker::readers::lmdb {

struct Database::Impl {};

bool available() { return false; }

Database::Database(const std::string& path) {
  fail(ErrorKind::kUnsupported,
       "cannot open LMDB database '" + path + "': stoker was built without LMDB. Install "
       "liblmdb (Debian/Ubuntu: 'apt-get install liblmdb-dev') and build stoker again");
}

Database::~Database() = default;

const std::string& Database::path() const { fail(ErrorKind::kInternal, "LMDB is not built in"); }
int64_t Database::size() const { return 0; }
const std::string& Database::key(int64_t) const { fail(ErrorKind::kInternal, "LMDB is not built in"); }
void Database::get(int64_t, std::vector<uint8_t>&) const {
  fail(ErrorKind::kInternal, "LMDB is not built in");
}

}  // namespace stoker::readers::lmdb
