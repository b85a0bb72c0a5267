// libFuzzer harness: readers::SampleOrder::restore, the reader-position part of a checkpoint, on
// strings that come from outside (a checkpoint file can be old, edited or corrupt).
//
// Input: 8 bytes choose a configuration (samples, shards, batch, shuffling, padding) and a mode:
//   mode 0: the rest is the state string as is (it almost never passes the checksum);
//   mode 1: the rest plus a correct " sum <fnv1a>" suffix, so that the parser behind the checksum
//           is reached (use fuzz/sample_order.dict);
//   mode 2: a real state (after input[7] picks) with tokens replaced by interesting numbers
//           (pairs of bytes: which token, which value), then re-summed: deep, plausible states.
// Oracle: restore throws only Error(kInvalidArgument); a state it accepts must serialize to a
// string that restores again to the same state, and the next picks must be samples of the data
// set (index in [0, num_samples)), in epochs that never go back, identical in both copies.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"
#include "readers/sample_order.h"

namespace {

using stoker::readers::OrderConfig;
using stoker::readers::SampleOrder;

uint64_t fnv1a(const std::string& s) {  // the checksum restore() expects
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

bool g_verbose = false;  // STOKER_FUZZ_VERBOSE=1: print each state string (to read a reproducer)

std::string with_sum(const std::string& body) { return body + " sum " + std::to_string(fnv1a(body)); }

OrderConfig config_from(const uint8_t* b) {
  OrderConfig c;
  c.num_samples = 1 + b[0] % 40;
  c.num_shards = 1 + b[1] % static_cast<int>(std::min<int64_t>(4, c.num_samples));
  c.shard_id = b[2] % c.num_shards;
  c.batch_size = 1 + b[3] % 8;
  c.stick_to_shard = b[4] & 1;
  c.pad_last_batch = b[4] & 2;
  c.random_shuffle = b[4] & 4;
  c.shuffle_after_epoch = (b[4] & 8) && !c.random_shuffle;
  if (c.shuffle_after_epoch) c.stick_to_shard = false;
  c.initial_fill = 1 + b[5] % 16;
  c.seed = 7;
  return c;
}

std::string mutate(const std::string& state, const uint8_t* m, size_t n) {
  const std::string body = state.substr(0, state.rfind(" sum "));
  std::vector<std::string> tok;
  std::istringstream in(body);
  for (std::string w; in >> w;) tok.push_back(w);
  for (size_t i = 0; i + 1 < n; i += 2) {
    std::string& t = tok[m[i] % tok.size()];
    long long cur = 0;
    try { cur = std::stoll(t); } catch (...) {}
    const uint8_t v = m[i + 1];
    // Wrapping arithmetic: the harness itself must not overflow a signed integer.
    auto wrap = [](unsigned long long x) { return std::to_string(static_cast<long long>(x)); };
    const unsigned long long u = static_cast<unsigned long long>(cur);
    switch (v % 16) {
      case 0: t = "0"; break;
      case 1: t = "1"; break;
      case 2: t = "-1"; break;
      case 3: t = std::to_string(std::numeric_limits<int64_t>::max()); break;
      case 4: t = std::to_string(std::numeric_limits<int64_t>::min()); break;
      case 5: t = std::to_string(std::numeric_limits<uint64_t>::max()); break;
      case 6: t = std::to_string(uint64_t{1} << 32); break;
      case 7: t = std::to_string(std::numeric_limits<int32_t>::max()); break;
      case 8: t = wrap(u + 1); break;
      case 9: t = wrap(u - 1); break;
      case 10: t = wrap(u * 2); break;
      case 11: t = std::to_string(cur / 2); break;
      case 12: t = wrap(u + (v >> 4)); break;
      case 13: t = wrap(u - (v >> 4)); break;
      case 14: t = std::to_string(v >> 4); break;
      default: t = ""; break;  // drop the token
    }
  }
  std::string out;
  for (const auto& t : tok)
    if (!t.empty()) out += (out.empty() ? "" : " ") + t;
  return with_sum(out);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  if (size < 8) return 0;
  const OrderConfig cfg = config_from(data);
  const int mode = data[6] % 3;
  const uint8_t* rest = data + 8;
  const size_t n = size - 8;

  std::string state;
  if (mode == 2) {
    SampleOrder real(cfg);
    for (int i = 0; i < data[7]; ++i) real.next();
    state = mutate(real.serialize(), rest, n);
  } else {
    state.assign(reinterpret_cast<const char*>(rest), n);
    if (mode == 1) state = with_sum(state);
  }

  if (g_verbose) std::fprintf(stderr, "state: %s\n", state.c_str());

  SampleOrder a(cfg);
  // A real state, unchanged, must be accepted: restore's checks must not be too strict.
  const bool real_state = mode == 2 && n < 2;
  if (!fuzz::expect_ok_or("restore", {ErrorKind::kInvalidArgument}, [&] { a.restore(state); })) {
    if (real_state) fuzz::finding("restore refused an unchanged real state: " + state);
    return 0;
  }
  const std::string s1 = a.serialize();
  SampleOrder b(cfg);
  fuzz::expect_ok_or("restore of serialize() of a restored state", {}, [&] { b.restore(s1); });
  if (b.serialize() != s1) fuzz::finding("serialize(restore(s)) is not stable: " + s1);

  int64_t last_epoch = a.epoch();
  const int64_t picks = std::min<int64_t>(300, 3 * cfg.num_samples + 2 * cfg.batch_size);
  for (int64_t i = 0; i < picks; ++i) {
    const readers::Pick p = a.next(), q = b.next();
    if (p.index < 0 || p.index >= cfg.num_samples)
      fuzz::finding("after restore, pick " + std::to_string(i) + " is sample " +
                    std::to_string(p.index) + " of a data set of " +
                    std::to_string(cfg.num_samples) + "; state: " + state);
    if (p.epoch < last_epoch) fuzz::finding("after restore, the epoch went back; state: " + state);
    if (p.index != q.index || p.epoch != q.epoch || p.padded != q.padded)
      fuzz::finding("two restores of the same state give different picks; state: " + state);
    last_epoch = p.epoch;
  }
  return 0;
}

namespace {

// A mode-1 input: configuration bytes, then a state text (the harness appends its checksum).
stoker::fuzz::Regression state_case(const char* name, std::vector<uint8_t> cfg,
                                    const std::string& text) {
  cfg.resize(6);
  cfg.push_back(1);  // mode 1
  cfg.push_back(0);
  cfg.insert(cfg.end(), text.begin(), text.end());
  return {name, cfg};
}

// Inputs fixed in SampleOrder::restore (the first found by fuzzing, the others while fixing it,
// confirmed by this oracle on the old code); made here, not stored.
// Config bytes {0x20, 0x70, 0x6f, 0x73, 0x20, 0x0a}: 33 samples, 1 shard, batch 4, no shuffle.
std::vector<stoker::fuzz::Regression> regressions() {
  const std::vector<uint8_t> cfg33 = {0x20, 0x70, 0x6f, 0x73, 0x20, 0x0a};
  const std::string head = "stoker.sample_order 1 cfg 33 0 1 4 0 1 7 524287 pos ";
  return {
      // read epoch INT64_MAX: counting the segments overflowed (UBSan) before the epochs were
      // range-checked.
      state_case("epoch overflow", cfg33,
                 head + "9223372036854775807 2 2 0 1 1 0 0 segs 1 1 2 buf 1 1"),
      // 5 samples in 2 shards of 2 and 3: a read position of 2 in shard 0 passed the check
      // against the larger shard's size, and read_one() then walked on to samples 2, 3, 4 and
      // 5, past the end of the data set.
      state_case("read position past a smaller shard", {4, 1, 0, 1, 0, 0},
                 "stoker.sample_order 1 cfg 5 0 2 2 0 1 7 524287 "
                 "pos 0 2 1 0 0 0 -1 0 segs 1 0 1 buf 1 0"),
      // pad_last_batch, and an emptied first epoch before any sample was delivered: next()
      // padded with last_index_ -1, a sample index below 0.
      state_case("padding before any sample", {4, 1, 0, 1, 2, 0},
                 "stoker.sample_order 1 cfg 5 0 2 2 2 1 7 524287 "
                 "pos 1 1 3 0 0 0 -1 0 segs 2 2 2 3 buf 1 0"),
  };
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_verbose = std::getenv("STOKER_FUZZ_VERBOSE") != nullptr;
  stoker::fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
