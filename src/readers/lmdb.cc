#include "readers/lmdb.h"

#include <lmdb.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "readers/random_access_file.h"

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

// liblmdb maps the data file and follows the page numbers and offsets it finds there without
// checking them against the file, so a truncated or damaged file ends the process (SIGBUS past
// the end of the file, SIGSEGV, SIGFPE on a zero page size, an abort on its assertions). The
// file is therefore checked here, with plain reads, before liblmdb opens it: the meta pages
// against the file's size, then every branch and leaf page of the main database's B-tree, so
// that every page and byte liblmdb will touch for a read lies inside the file and inside its
// page. The layout is liblmdb's on-disk format (mdb.c: MDB_page, MDB_node, MDB_meta, MDB_db;
// data format version 1, host byte order, 64-bit page numbers).
static_assert(sizeof(size_t) == 8, "the LMDB format check reads the 64-bit layout");

constexpr uint32_t kMagic = 0xBEEFC0DE;
constexpr uint32_t kDataVersion = 1;
constexpr uint64_t kPageHeader = 16;  // pgno u64, pad u16, flags u16, lower u16, upper u16
constexpr uint64_t kNodeHeader = 8;   // lo u16, hi u16, flags u16, ksize u16
constexpr uint64_t kMetaBytes = 136;  // MDB_meta: magic, version, address, mapsize, 2 MDB_db, last_pg, txnid
constexpr uint64_t kMinPageSize = 512, kMaxPageSize = 32768;
constexpr uint64_t kInvalidPage = ~uint64_t{0};
constexpr int kMaxDepth = 32;  // liblmdb's CURSOR_STACK: a deeper tree cannot be read
constexpr uint16_t kPageBranch = 0x01, kPageLeaf = 0x02, kPageOverflow = 0x04, kPageMeta = 0x08,
                   kPageLeaf2 = 0x20, kPageSub = 0x40;
constexpr uint16_t kNodeBigData = 0x01, kNodeSubData = 0x02, kNodeDupData = 0x04;

template <typename T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct DbRecord {  // MDB_db
  uint32_t pad = 0;
  uint16_t flags = 0, depth = 0;
  uint64_t entries = 0, root = 0;
};

struct Meta {  // MDB_meta, after the page header
  uint16_t page_flags = 0;
  uint32_t magic = 0, version = 0;
  uint64_t mapsize = 0, last_page = 0, txnid = 0;
  DbRecord dbs[2];  // free pages, main database
};

DbRecord db_record(const uint8_t* p) {
  DbRecord d;
  d.pad = load<uint32_t>(p);
  d.flags = load<uint16_t>(p + 4);
  d.depth = load<uint16_t>(p + 6);
  d.entries = load<uint64_t>(p + 32);
  d.root = load<uint64_t>(p + 40);
  return d;
}

Meta meta_of(const uint8_t* page) {
  Meta m;
  m.page_flags = load<uint16_t>(page + 10);
  const uint8_t* p = page + kPageHeader;
  m.magic = load<uint32_t>(p);
  m.version = load<uint32_t>(p + 4);
  m.mapsize = load<uint64_t>(p + 16);
  m.dbs[0] = db_record(p + 24);
  m.dbs[1] = db_record(p + 72);
  m.last_page = load<uint64_t>(p + 120);
  m.txnid = load<uint64_t>(p + 128);
  return m;
}

class Checker {
 public:
  Checker(const std::string& path, const std::string& data_path)
      : path_(path), file_(data_path) {}

  // Checks the file; returns the main database's keys in LMDB's order.
  std::vector<std::string> run() {
    const uint64_t size = static_cast<uint64_t>(file_.size());
    uint8_t head[kPageHeader + kMetaBytes];
    const size_t got = file_.read_some(0, head, sizeof head);
    if (got >= 20 && load<uint32_t>(head + kPageHeader) != kMagic) not_lmdb();
    if (got < sizeof head)
      truncated("it has " + std::to_string(size) + " bytes, fewer than the " +
                std::to_string(sizeof head) + " bytes of LMDB's first meta page");
    const Meta m0 = meta_of(head);
    check_meta(m0, "first");
    psize_ = m0.dbs[0].pad;
    if (psize_ < kMinPageSize || psize_ > kMaxPageSize || (psize_ & (psize_ - 1)))
      damaged("its meta page gives a page size of " + std::to_string(psize_) +
              " bytes (LMDB's are a power of two from 512 to 32768)");
    if (size < 2 * psize_)
      truncated("it has " + std::to_string(size) + " bytes, fewer than the " +
                std::to_string(2 * psize_) + " bytes of LMDB's two meta pages");
    file_.read_some(static_cast<int64_t>(psize_), head, sizeof head);
    const Meta m1 = meta_of(head);
    check_meta(m1, "second");
    if (m1.dbs[0].pad != psize_)
      damaged("its two meta pages give different page sizes (" + std::to_string(psize_) + " and " +
              std::to_string(m1.dbs[0].pad) + " bytes)");
    // liblmdb reads the snapshot of the meta page with the larger transaction id (the first on
    // a tie).
    const Meta& m = m1.txnid > m0.txnid ? m1 : m0;
    if (m.last_page < 1 || m.last_page >= (uint64_t{1} << 48))
      damaged("its meta page gives " + std::to_string(m.last_page) + " as the last page");
    if (m.last_page >= size / psize_)
      truncated("its meta page says the database has " +
                std::to_string(m.last_page + 1) + " pages of " + std::to_string(psize_) +
                " bytes (" + std::to_string((m.last_page + 1) * psize_) + " bytes), but the file has " +
                std::to_string(size) + " bytes");
    npages_ = m.last_page + 1;
    for (int i = 0; i < 2; ++i) {
      const uint64_t root = m.dbs[i].root;
      if (root != kInvalidPage && (root < 2 || root >= npages_))
        damaged("the root page of its " + std::string(i ? "main" : "free-page") + " database, " +
                std::to_string(root) + ", is not one of its " + std::to_string(npages_) + " pages");
    }
    const DbRecord& main = m.dbs[1];
    if (main.flags & MDB_DUPSORT)
      fail(ErrorKind::kInvalidArgument,
           "'" + path_ + "' is an LMDB database with duplicate keys (MDB_DUPSORT), which Caffe and "
           "Caffe2 databases never have; stoker reads databases with one value per key");
    flags_ = main.flags;
    std::vector<std::string> keys;
    if (main.root == kInvalidPage) {
      if (main.entries != 0 || main.depth != 0)
        damaged("its main database has no root page but claims " + std::to_string(main.entries) +
                " entries");
      return keys;
    }
    if (main.depth < 1 || main.depth > kMaxDepth)
      damaged("its main database claims a depth of " + std::to_string(main.depth) +
              " levels (LMDB reads 1 to 32)");
    depth_ = main.depth;
    seen_.assign(npages_, false);
    keys_ = &keys;
    visit(main.root, 1);
    if (keys.size() != main.entries)
      damaged("its main database claims " + std::to_string(main.entries) + " entries, its pages hold " +
              std::to_string(keys.size()));
    return keys;
  }

 private:
  [[noreturn]] void not_lmdb() const {
    fail(ErrorKind::kInvalidArgument,
         "'" + path_ + "' is not an LMDB database: it does not start with an LMDB meta page");
  }
  [[noreturn]] void truncated(const std::string& what) const {
    fail(ErrorKind::kInvalidArgument, "LMDB database '" + path_ + "' is truncated: " + what +
                                          ". Copy or write it again");
  }
  [[noreturn]] void damaged(const std::string& what) const {
    fail(ErrorKind::kInvalidArgument, "LMDB database '" + path_ + "' is damaged: " + what +
                                          ". Copy or write it again");
  }

  void check_meta(const Meta& m, const char* which) const {
    if (!(m.page_flags & kPageMeta) || m.magic != kMagic) {
      if (std::string(which) == "first") not_lmdb();
      damaged("its second page is not an LMDB meta page");
    }
    if (m.version != kDataVersion)
      fail(ErrorKind::kInvalidArgument,
           "'" + path_ + "' is an LMDB database of data format version " + std::to_string(m.version) +
               " (" + which + " meta page); liblmdb " + MDB_VERSION_STRING + " reads version 1");
  }

  static std::string page_name(uint64_t pgno, bool leaf) {
    return std::string(leaf ? "leaf" : "branch") + " page " + std::to_string(pgno);
  }

  // Marks `count` pages from `first` as used, each once; by() names the user for the message.
  template <typename By>
  void claim(uint64_t first, uint64_t count, const By& by) {
    for (uint64_t p = first; p < first + count; ++p) {
      if (seen_[p]) damaged("page " + std::to_string(p) + " is used twice (again by " + by() + ")");
      seen_[p] = true;
    }
  }

  // Checks the subtree at `pgno`, `level` levels below the top (the root is level 1).
  void visit(uint64_t pgno, int level) {
    const bool leaf = level == depth_;
    const std::string name = page_name(pgno, leaf);  // (one per page; nodes are named on error)
    if (pgno < 2 || pgno >= npages_)
      damaged("a branch page points to page " + std::to_string(pgno) + ", outside its " +
              std::to_string(npages_) + " pages");
    claim(pgno, 1, [&] { return name; });
    std::vector<uint8_t> page(psize_);
    file_.read_exact(static_cast<int64_t>(pgno * psize_), page.data(), page.size(), "LMDB page");
    const uint8_t* p = page.data();
    if (load<uint64_t>(p) != pgno)
      damaged(name + " carries the number " + std::to_string(load<uint64_t>(p)));
    const uint16_t type = load<uint16_t>(p + 10) &
                          (kPageBranch | kPageLeaf | kPageOverflow | kPageMeta | kPageLeaf2 | kPageSub);
    if (type != (leaf ? kPageLeaf : kPageBranch))
      damaged(name + " has the page type 0x" + hex(type) + " (a tree of depth " +
              std::to_string(depth_) + " has " + (leaf ? "a leaf" : "a branch") + " there)");
    const uint64_t lower = load<uint16_t>(p + 12), upper = load<uint16_t>(p + 14);
    if (lower < kPageHeader + 2 || (lower - kPageHeader) % 2 || lower > upper || upper > psize_)
      damaged(name + " has free-space bounds " + std::to_string(lower) + ".." + std::to_string(upper));
    const uint64_t nkeys = (lower - kPageHeader) / 2;
    for (uint64_t i = 0; i < nkeys; ++i) {
      const uint64_t off = load<uint16_t>(p + kPageHeader + 2 * i);
      auto node = [&] { return "node " + std::to_string(i) + " of " + name; };
      if (off < upper || off + kNodeHeader > psize_)
        damaged(node() + " starts at byte " + std::to_string(off) + ", outside the page's nodes");
      const uint8_t* n = p + off;
      const uint64_t lo = load<uint16_t>(n), hi = load<uint16_t>(n + 2),
                     nflags = load<uint16_t>(n + 4), ksize = load<uint16_t>(n + 6);
      const uint64_t key_end = off + kNodeHeader + ksize;
      if (key_end > psize_)
        damaged(node() + " has a key of " + std::to_string(ksize) + " bytes, past the page's end");
      std::string key(reinterpret_cast<const char*>(n + kNodeHeader), ksize);
      // liblmdb compares integer keys as words of the searched key's size.
      if ((flags_ & MDB_INTEGERKEY) && (leaf || i > 0) && ksize != 4 && ksize != 8)
        damaged(node() + " has a key of " + std::to_string(ksize) +
                " bytes in a database of integer keys (4 or 8 bytes)");
      if (!leaf) {
        const uint64_t child = lo | (hi << 16) | (nflags << 32);
        // Keys left of a separator are smaller than it, keys right of it are not.
        if (i > 0 && ordered()) {
          if (have_prev_ && prev_ >= key) damaged(node() + " has a key out of order");
          bound_ = key;
          have_bound_ = true;
        }
        visit(child, level + 1);
        continue;
      }
      if (nflags & (kNodeSubData | kNodeDupData))
        fail(ErrorKind::kInvalidArgument,
             "'" + path_ + "' is an LMDB database with named sub-databases or duplicate keys (" + node() +
                 "), which Caffe and Caffe2 databases never have");
      if (nflags & ~kNodeBigData) damaged(node() + " has the flags 0x" + hex(nflags));
      const uint64_t dsize = lo | (hi << 16);
      if (nflags & kNodeBigData) {
        if (key_end + 8 > psize_) damaged(node() + " reaches past the page's end");
        const uint64_t first = load<uint64_t>(n + kNodeHeader + ksize);
        const uint64_t count = (kPageHeader - 1 + dsize) / psize_ + 1;  // liblmdb's OVPAGES
        if (first < 2 || first >= npages_ || count > npages_ - first)
          damaged(node() + " keeps its " + std::to_string(dsize) + "-byte value on pages " +
                  std::to_string(first) + ".." + std::to_string(first + count - 1) +
                  ", outside the file's " + std::to_string(npages_) + " pages");
        claim(first, count, [&] { return "the value of " + node(); });
      } else if (key_end + dsize > psize_) {
        damaged(node() + " has a value of " + std::to_string(dsize) + " bytes, past the page's end");
      }
      if (ordered()) {
        if ((have_prev_ && prev_ >= key) || (have_bound_ && key < bound_))
          damaged(node() + " has a key out of order");
        prev_ = key;
        have_prev_ = true;
      }
      keys_->push_back(std::move(key));
    }
  }

  // Whether keys compare as liblmdb's default (memcmp, then shorter first), which
  // std::string's comparison matches.
  bool ordered() const { return !(flags_ & (MDB_REVERSEKEY | MDB_INTEGERKEY)); }

  static std::string hex(uint64_t v) {
    char buf[20];
    std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(v));
    return buf;
  }

  std::string path_;
  RandomAccessFile file_;
  uint64_t psize_ = 0, npages_ = 0;
  int depth_ = 0;
  uint16_t flags_ = 0;
  std::vector<bool> seen_;
  std::vector<std::string>* keys_ = nullptr;
  std::string prev_, bound_;
  bool have_prev_ = false, have_bound_ = false;
};

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
  const bool dir = S_ISDIR(st.st_mode);
  const std::string data_path = dir ? path + "/data.mdb" : path;
  if (dir && ::stat(data_path.c_str(), &st) != 0)
    fail(ErrorKind::kInvalidArgument,
         "'" + path + "' is not an LMDB database: the folder has no data.mdb");
  impl_->keys = Checker(path, data_path).run();

  const unsigned flags = MDB_RDONLY | MDB_NOTLS | MDB_NOLOCK | (dir ? 0 : MDB_NOSUBDIR);
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
