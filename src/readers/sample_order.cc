#include "readers/sample_order.h"

#include <charconv>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/error.h"
#include "core/random.h"

namespace stoker::readers {
namespace {

// Stream ids under the seeds, so that the reader's draws never coincide with an operator's.
constexpr uint64_t kBufferStream = 0x726561642d627566ull;  // "read-buf"
constexpr uint64_t kListStream = 0x726561642d6c7374ull;    // "read-lst"
constexpr int kFeistelRounds = 8;
constexpr const char* kMagic = "stoker.sample_order";
constexpr int kVersion = 1;
constexpr int64_t kMaxEpoch = int64_t{1} << 62;  // a restored state's epochs stay below this

[[noreturn]] void bad_arg(const std::string& msg) { fail(ErrorKind::kInvalidArgument, msg); }

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// A keyed pseudo-random permutation of [0, n), computed per element: a balanced Feistel network
// over the smallest 2h-bit domain holding n, cycle-walked back into [0, n). It needs no O(n)
// table, so a reader over a billion samples keeps a few bytes of state and can seek anywhere
// (the same idea as Grain's index_shuffle). `tweak` selects one permutation of the family.
int64_t permute(int64_t x, int64_t n, uint64_t key, uint64_t tweak) {
  int half = 1;
  while ((uint64_t{1} << (2 * half)) < static_cast<uint64_t>(n)) ++half;
  const uint64_t mask = (uint64_t{1} << half) - 1;
  uint64_t v = static_cast<uint64_t>(x);
  do {
    uint64_t l = v >> half, r = v & mask;
    for (int round = 0; round < kFeistelRounds; ++round) {
      // half <= 32, so r fits Philox's 32-bit sample slot.
      Philox f(key, (tweak << 8) | static_cast<uint64_t>(round), static_cast<uint32_t>(r));
      uint64_t nl = r;
      r = l ^ (f.next_u64() & mask);
      l = nl;
    }
    v = (l << half) | r;
  } while (v >= static_cast<uint64_t>(n));
  return static_cast<int64_t>(v);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

int64_t shard_begin(int shard_id, int num_shards, int64_t num_samples) {
  // floor(i*N/S) without forming i*N, which could overflow: N = q*S + r.
  const int64_t q = num_samples / num_shards, r = num_samples % num_shards;
  return q * shard_id + r * shard_id / num_shards;
}

int64_t shard_size(int shard_id, int num_shards, int64_t num_samples) {
  return shard_begin(shard_id + 1, num_shards, num_samples) -
         shard_begin(shard_id, num_shards, num_samples);
}

int shard_for_epoch(const ReaderMeta& meta, int64_t epoch) {
  if (meta.stick_to_shard) return meta.shard_id;
  return static_cast<int>((meta.shard_id + epoch % meta.number_of_shards) % meta.number_of_shards);
}

ShardEpochCount shard_epoch_count(const ReaderMeta& meta, int shard_id, int batch_size) {
  if (batch_size < 1) bad_arg("batch_size must be at least 1, got " + std::to_string(batch_size));
  if (shard_id < 0 || shard_id >= meta.number_of_shards)
    bad_arg("shard_id must be in [0, num_shards) = [0, " + std::to_string(meta.number_of_shards) +
            "), got " + std::to_string(shard_id));
  ShardEpochCount c;
  c.samples = shard_size(shard_id, meta.number_of_shards, meta.epoch_size);
  c.padded = meta.pad_last_batch
                 ? ceil_div(ceil_div(meta.epoch_size, meta.number_of_shards), batch_size) * batch_size
                 : c.samples;
  c.batches = ceil_div(c.padded, batch_size);
  return c;
}

SampleOrder::SampleOrder(const OrderConfig& config) : cfg_(config) {
  const auto& c = cfg_;
  if (c.num_shards < 1)
    bad_arg("num_shards must be at least 1, got " + std::to_string(c.num_shards));
  if (c.shard_id < 0 || c.shard_id >= c.num_shards)
    bad_arg("shard_id must be in [0, num_shards) = [0, " + std::to_string(c.num_shards) +
            "), got shard_id=" + std::to_string(c.shard_id) +
            "; give each pipeline a shard_id below num_shards");
  if (c.num_samples < 1)
    bad_arg("the reader has no samples (num_samples=" + std::to_string(c.num_samples) +
            "); point it at a non-empty data set");
  if (c.num_shards > c.num_samples)
    bad_arg("num_shards (" + std::to_string(c.num_shards) + ") must not exceed the number of "
            "samples (" + std::to_string(c.num_samples) + "): every shard needs a sample; "
            "use fewer shards");
  if (c.batch_size < 1)
    bad_arg("batch_size must be at least 1, got " + std::to_string(c.batch_size));
  if (c.random_shuffle && c.initial_fill < 1)
    bad_arg("initial_fill must be at least 1 when random_shuffle is True, got " +
            std::to_string(c.initial_fill));
  if (c.shuffle_after_epoch && c.random_shuffle)
    bad_arg("shuffle_after_epoch and random_shuffle cannot both be True; "
            "choose one way of shuffling");
  if (c.shuffle_after_epoch && c.stick_to_shard)
    bad_arg("shuffle_after_epoch and stick_to_shard cannot both be True: shuffle_after_epoch "
            "reshuffles the whole data set every epoch, so a shard's content changes anyway");
  // As in DALI, shuffle_after_epoch keeps the shard and reshuffles what falls into it.
  if (cfg_.shuffle_after_epoch) cfg_.stick_to_shard = true;
  fill_ = c.random_shuffle ? c.initial_fill : 1;
  padded_shard_ = ceil_div(c.num_samples, c.num_shards);
  fill_buffer();
}

int64_t SampleOrder::resolve(int64_t epoch, int64_t list_pos) const {
  const uint64_t key = rng_key(cfg_.list_seed, kListStream);
  if (cfg_.shuffle_after_epoch)
    return permute(list_pos, cfg_.num_samples, key, static_cast<uint64_t>(epoch) + 1);
  if (cfg_.random_shuffle)  // one fixed permutation, so shards are random disjoint subsets
    return permute(list_pos, cfg_.num_samples, key, 0);
  return list_pos;
}

int64_t SampleOrder::read_one() {
  const int shard = cfg_.stick_to_shard
      ? cfg_.shard_id
      : static_cast<int>((cfg_.shard_id + read_epoch_ % cfg_.num_shards) % cfg_.num_shards);
  const int64_t idx = resolve(read_epoch_, shard_begin(shard, cfg_.num_shards, cfg_.num_samples) +
                                               read_pos_);
  // The sample belongs to epoch read_epoch_; segments_ holds one segment per epoch from the
  // consumer's on.
  while (consumer_epoch_ + static_cast<int64_t>(segments_.size()) - 1 < read_epoch_)
    segments_.push_back({total_read_, total_read_});
  ++segments_.back().end;
  ++total_read_;
  if (++read_pos_ == shard_size(shard, cfg_.num_shards, cfg_.num_samples)) {
    ++read_epoch_;
    read_pos_ = 0;
  }
  return idx;
}

void SampleOrder::fill_buffer() {
  buffer_.assign(static_cast<size_t>(fill_), -1);
  for (int64_t i = 0; i < fill_; ++i) {
    uint64_t counter = total_read_;
    buffer_[counter % fill_] = read_one();
  }
}

Pick SampleOrder::next() {
  const bool new_batch = pos_in_batch_ == 0;
  pos_in_batch_ = (pos_in_batch_ + 1) % cfg_.batch_size;
  if (segments_.front().start == segments_.front().end) {
    // DALI's ShouldPadBatch: pad up to ceil(N / S) samples, then to the end of the batch, so
    // that every shard gives the same number of whole batches.
    if (cfg_.pad_last_batch && (returned_ < padded_shard_ || !new_batch)) {
      ++returned_;
      return {last_index_, true, consumer_epoch_};
    }
    segments_.pop_front();
    ++consumer_epoch_;
    returned_ = 0;
  }
  const uint64_t start = segments_.front().start;
  const uint64_t avail = segments_.front().end - start;  // >= 1: shards are never empty
  uint64_t offset = 0;
  if (cfg_.random_shuffle) {
    // Only samples of the current epoch are eligible, so each appears once per epoch.
    Philox rng(rng_key(cfg_.seed, kBufferStream), draws_++, 0);
    offset = rng.below(static_cast<uint32_t>(avail));
  }
  const size_t home = start % fill_;
  std::swap(buffer_[home], buffer_[(start + offset) % fill_]);
  const int64_t out = buffer_[home];
  // The buffer is full, so the next read counter (start + fill_) maps to the freed slot.
  buffer_[home] = read_one();
  ++segments_.front().start;
  ++returned_;
  last_index_ = out;
  return {out, false, consumer_epoch_};
}

std::vector<Pick> SampleOrder::next_batch() {
  std::vector<Pick> batch;
  batch.reserve(cfg_.batch_size);
  for (int i = 0; i < cfg_.batch_size; ++i) batch.push_back(next());
  return batch;
}

ReaderMeta SampleOrder::meta() const {
  ReaderMeta m;
  m.epoch_size = cfg_.num_samples;
  m.epoch_size_padded = cfg_.pad_last_batch ? padded_shard_ * cfg_.num_shards : cfg_.num_samples;
  m.number_of_shards = cfg_.num_shards;
  m.shard_id = cfg_.shard_id;
  m.pad_last_batch = cfg_.pad_last_batch;
  m.stick_to_shard = cfg_.stick_to_shard;
  return m;
}

// ---- state

namespace {

int config_flags(const OrderConfig& c) {
  return (c.stick_to_shard ? 1 : 0) | (c.pad_last_batch ? 2 : 0) | (c.random_shuffle ? 4 : 0) |
         (c.shuffle_after_epoch ? 8 : 0);
}

// Checkpoint strings are written and read without iostreams: they do not depend on the
// process's locale, nor on iostreams being set up in the C++ runtime the module was linked with
// (a libstdc++ linked statically into the module leaves them unusable).
class Tokens {
 public:
  explicit Tokens(std::string s) : s_(std::move(s)) {}
  std::string word(const char* what) {
    std::string w = next();
    if (w.empty()) bad("ends before " + std::string(what));
    return w;
  }
  void expect(const char* literal) {
    std::string w = word(literal);
    if (w != literal) bad("expected '" + std::string(literal) + "', found '" + w + "'");
  }
  template <typename T>
  T num(const char* what) {
    std::string w = word(what);
    T v{};
    auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || p != w.data() + w.size())
      bad(std::string(what) + " is not a number: '" + w + "'");
    return v;
  }
  bool at_end() { return next().empty(); }
  [[noreturn]] static void bad(const std::string& why) {
    bad_arg("reader state is not valid: " + why +
            "; restore a state saved by a reader with the same arguments and data");
  }

 private:
  std::string next() {
    auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (pos_ < s_.size() && space(s_[pos_])) ++pos_;
    size_t start = pos_;
    while (pos_ < s_.size() && !space(s_[pos_])) ++pos_;
    return s_.substr(start, pos_ - start);
  }
  std::string s_;
  size_t pos_ = 0;
};

// Space-separated words and numbers, for the same reason.
class Words {
 public:
  template <typename T>
  Words& operator<<(const T& v) {
    if constexpr (std::is_convertible_v<T, std::string_view>) {
      s_ += std::string_view(v);
    } else if constexpr (std::is_same_v<T, char>) {
      s_ += v;
    } else {
      s_ += std::to_string(v);
    }
    return *this;
  }
  std::string str() const { return s_; }

 private:
  std::string s_;
};

}  // namespace

std::string SampleOrder::serialize() const {
  Words o;
  o << kMagic << ' ' << kVersion << " cfg " << cfg_.num_samples << ' ' << cfg_.shard_id << ' '
    << cfg_.num_shards << ' ' << cfg_.batch_size << ' ' << config_flags(cfg_) << ' ' << fill_
    << ' ' << cfg_.seed << ' ' << cfg_.list_seed << " pos " << read_epoch_ << ' ' << read_pos_
    << ' ' << total_read_ << ' ' << consumer_epoch_ << ' ' << returned_ << ' ' << pos_in_batch_
    << ' ' << last_index_ << ' ' << draws_ << " segs " << segments_.size() << ' '
    << (segments_.empty() ? total_read_ : segments_.front().start);
  for (const auto& s : segments_) o << ' ' << s.end;
  o << " buf " << buffer_.size();
  for (int64_t v : buffer_) o << ' ' << v;
  std::string body = o.str();
  return body + " sum " + std::to_string(fnv1a(body));
}

void SampleOrder::restore(const std::string& state) {
  auto sum_at = state.rfind(" sum ");
  if (state.compare(0, std::char_traits<char>::length(kMagic), kMagic) != 0)
    Tokens::bad("it does not start with '" + std::string(kMagic) + "'");
  if (sum_at == std::string::npos) Tokens::bad("the checksum is missing");
  {
    Tokens t(state.substr(sum_at));
    t.expect("sum");
    if (t.num<uint64_t>("checksum") != fnv1a(state.substr(0, sum_at)) || !t.at_end())
      Tokens::bad("the checksum does not match (the string was altered or truncated)");
  }
  Tokens t(state.substr(0, sum_at));
  t.expect(kMagic);
  int version = t.num<int>("version");
  if (version != kVersion)
    Tokens::bad("version " + std::to_string(version) + " is not supported (this build reads " +
                std::to_string(kVersion) + ")");
  t.expect("cfg");
  auto same = [](const char* name, auto saved, auto mine) {
    if (saved != mine) {
      Words m;
      m << "it comes from a reader with " << name << "=" << saved << ", this one has " << name
        << "=" << mine;
      Tokens::bad(m.str());
    }
  };
  same("num_samples", t.num<int64_t>("num_samples"), cfg_.num_samples);
  same("shard_id", t.num<int>("shard_id"), cfg_.shard_id);
  same("num_shards", t.num<int>("num_shards"), cfg_.num_shards);
  same("batch_size", t.num<int>("batch_size"), cfg_.batch_size);
  {
    const int saved = t.num<int>("flags"), mine = config_flags(cfg_);
    const char* names[] = {"stick_to_shard", "pad_last_batch", "random_shuffle",
                           "shuffle_after_epoch"};
    auto word = [](int flags, int bit) { return (flags >> bit) & 1 ? "True" : "False"; };
    if (saved < 0 || saved > 15) Tokens::bad("its flags are out of range");
    for (int bit = 0; bit < 4; ++bit)
      same(names[bit], word(saved, bit), std::string(word(mine, bit)));
  }
  same("initial_fill", t.num<int64_t>("initial_fill"), fill_);
  same("seed", t.num<uint64_t>("seed"), cfg_.seed);
  same("list_seed", t.num<uint64_t>("list_seed"), cfg_.list_seed);

  SampleOrder s = *this;  // build aside, commit only when all of it checks out
  t.expect("pos");
  s.read_epoch_ = t.num<int64_t>("read epoch");
  s.read_pos_ = t.num<int64_t>("read position");
  s.total_read_ = t.num<uint64_t>("read counter");
  s.consumer_epoch_ = t.num<int64_t>("epoch");
  s.returned_ = t.num<int64_t>("position in epoch");
  s.pos_in_batch_ = t.num<int64_t>("position in batch");
  s.last_index_ = t.num<int64_t>("last sample");
  s.draws_ = t.num<uint64_t>("draw counter");
  t.expect("segs");
  auto nseg = t.num<uint64_t>("segment count");
  // The numbers come from outside: range-check them before any arithmetic on them. Epochs stay
  // far below the int64 limit so that counting on from a restored state cannot overflow either.
  if (s.consumer_epoch_ < 0 || s.read_epoch_ < s.consumer_epoch_ || s.read_epoch_ > kMaxEpoch)
    Tokens::bad("its epochs are out of range");
  const uint64_t expect_segs =
      static_cast<uint64_t>(s.read_epoch_ - s.consumer_epoch_) + (s.read_pos_ > 0 ? 1 : 0);
  if (nseg < 1 || nseg != expect_segs) Tokens::bad("the epoch segments do not match the epochs");
  s.segments_.clear();
  uint64_t begin = t.num<uint64_t>("segment start");
  for (uint64_t i = 0; i < nseg; ++i) {
    uint64_t end = t.num<uint64_t>("segment end");
    if (end < begin || (i > 0 && end == begin)) Tokens::bad("a segment is out of order");
    s.segments_.push_back({begin, end});
    begin = end;
  }
  t.expect("buf");
  if (t.num<uint64_t>("buffer size") != static_cast<uint64_t>(fill_))
    Tokens::bad("the shuffle buffer has the wrong size");
  for (auto& v : s.buffer_) {
    v = t.num<int64_t>("buffer entry");
    if (v < 0 || v >= cfg_.num_samples) Tokens::bad("a buffer entry is out of range");
  }
  if (!t.at_end()) Tokens::bad("there is trailing data");
  const int64_t limit = cfg_.pad_last_batch
      ? ceil_div(padded_shard_, cfg_.batch_size) * cfg_.batch_size : padded_shard_;
  // The read position lies inside the shard being read (shards differ in size by one, so
  // padded_shard_ is not enough: read_one() would walk past the end of a smaller shard).
  const int read_shard = cfg_.stick_to_shard
      ? cfg_.shard_id
      : static_cast<int>((cfg_.shard_id + s.read_epoch_ % cfg_.num_shards) % cfg_.num_shards);
  // No sample has been delivered exactly at the start of epoch 0 (last_index_ -1); padding
  // repeats last_index_, so an epoch whose samples are all delivered has delivered some.
  const bool first = s.consumer_epoch_ == 0 && s.returned_ == 0;
  if (s.read_pos_ < 0 || s.read_pos_ >= shard_size(read_shard, cfg_.num_shards, cfg_.num_samples) ||
      s.returned_ < 0 || s.returned_ > limit ||
      s.pos_in_batch_ < 0 || s.pos_in_batch_ >= cfg_.batch_size || s.last_index_ < -1 ||
      s.last_index_ >= cfg_.num_samples || (s.last_index_ == -1) != first ||
      (s.segments_.front().start == s.segments_.front().end && s.returned_ == 0) ||
      s.segments_.back().end != s.total_read_ ||
      s.total_read_ - s.segments_.front().start != static_cast<uint64_t>(fill_))
    Tokens::bad("its positions are inconsistent");
  *this = std::move(s);
}

// ---- a reader's state: the order plus the samples skipped as bad

namespace {
constexpr const char* kReaderMagic = "stoker.reader";
constexpr int kReaderVersion = 1;
}  // namespace

std::string serialize_reader_state(const SampleOrder& order, const std::set<int64_t>& bad) {
  Words o;
  o << kReaderMagic << ' ' << kReaderVersion << " bad " << bad.size();
  for (int64_t i : bad) o << ' ' << i;
  std::string head = o.str();
  return head + " sum " + std::to_string(fnv1a(head)) + " order " + order.serialize();
}

void restore_reader_state(const std::string& state, SampleOrder& order, std::set<int64_t>& bad) {
  if (state.compare(0, std::char_traits<char>::length(kReaderMagic), kReaderMagic) != 0)
    Tokens::bad("it does not start with '" + std::string(kReaderMagic) + "'");
  const auto order_at = state.find(" order ");
  const auto sum_at = state.rfind(" sum ", order_at);
  if (order_at == std::string::npos || sum_at == std::string::npos)
    Tokens::bad("it has no sample order or no checksum");
  const std::string head = state.substr(0, sum_at);
  {
    Tokens t(state.substr(sum_at, order_at - sum_at));
    t.expect("sum");
    if (t.num<uint64_t>("checksum") != fnv1a(head) || !t.at_end())
      Tokens::bad("the checksum does not match (the string was altered or truncated)");
  }
  Tokens t(head);
  t.expect(kReaderMagic);
  const int version = t.num<int>("version");
  if (version != kReaderVersion)
    Tokens::bad("version " + std::to_string(version) + " is not supported (this build reads " +
                std::to_string(kReaderVersion) + ")");
  t.expect("bad");
  const auto n = t.num<uint64_t>("bad sample count");
  const int64_t num_samples = order.config().num_samples;
  if (n >= static_cast<uint64_t>(num_samples))
    Tokens::bad("it has " + std::to_string(n) + " bad samples, not fewer than the reader's " +
                std::to_string(num_samples));
  std::set<int64_t> b;
  int64_t prev = -1;
  for (uint64_t k = 0; k < n; ++k) {
    const auto i = t.num<int64_t>("bad sample");
    if (i <= prev || i >= num_samples)
      Tokens::bad("bad sample " + std::to_string(i) + " is out of order or out of range (the "
                  "reader has " + std::to_string(num_samples) + " samples)");
    b.insert(i);
    prev = i;
  }
  if (!t.at_end()) Tokens::bad("there is trailing data after the bad samples");
  SampleOrder o = order;  // commit both only when both check out
  o.restore(state.substr(order_at + std::char_traits<char>::length(" order ")));
  order = std::move(o);
  bad = std::move(b);
}

}  // namespace stoker::readers
