// Which sample a reader delivers next: sharding, shuffling, epochs, padding and the reader's
// checkpoint state, written once for every reader (file, TFRecord, RecordIO, LMDB, tar, NumPy...).
//
// The semantics are DALI's Loader (dali/operators/reader/loader/loader.{h,cc} and
// file_label_loader.h); see README.md in this folder for the details that were checked.
// A reader asks this class for sample *indices* into its own list and only does the I/O.
#pragma once
#include <cstdint>
#include <deque>
#include <set>
#include <string>
#include <vector>

namespace stoker::readers {

// DALI's fixed seed for the data-set order (kDaliDataloaderSeed): every shard of a job must see
// the same permutation of the list, whatever each pipeline's own seed is, or shards overlap.
inline constexpr uint64_t kDefaultListSeed = 524287;

struct OrderConfig {
  int64_t num_samples = 0;      // size of the whole data set (all shards)
  int shard_id = 0;
  int num_shards = 1;
  int batch_size = 1;           // the pipeline's max_batch_size; padding fills whole batches
  bool stick_to_shard = false;
  bool pad_last_batch = false;
  bool random_shuffle = false;  // shuffle buffer of initial_fill samples (+ one fixed list shuffle)
  bool shuffle_after_epoch = false;  // a new permutation of the whole list every epoch
  int initial_fill = 1024;      // shuffle buffer size; ignored unless random_shuffle
  uint64_t seed = 0;            // the reader's seed: draws from the shuffle buffer
  uint64_t list_seed = kDefaultListSeed;  // the list permutations (DALI: shuffle_after_epoch_seed)
};

// The same fields as DALI's Pipeline.reader_meta().
struct ReaderMeta {
  int64_t epoch_size = 0;         // samples in all shards, no padding
  int64_t epoch_size_padded = 0;  // pad_last_batch ? ceil(N / S) * S : N  (DALI Loader::Size(true))
  int number_of_shards = 1;
  int shard_id = 0;
  bool pad_last_batch = false;
  bool stick_to_shard = false;    // true also when shuffle_after_epoch forces it, as DALI reports
};

// One delivered sample.
struct Pick {
  int64_t index = 0;    // index into the reader's list, in [0, num_samples)
  bool padded = false;  // a repeat of the previous sample that fills the shard's last batch
  int64_t epoch = 0;    // the epoch this sample belongs to (padding belongs to the ending one)
};

// Shard arithmetic, DALI's formulas (loader.cc start_index / num_samples).
int64_t shard_begin(int shard_id, int num_shards, int64_t num_samples);  // floor(i*N/S)
int64_t shard_size(int shard_id, int num_shards, int64_t num_samples);
// The shard a reader reads in epoch `epoch`: it moves on by one shard per epoch unless it sticks.
int shard_for_epoch(const ReaderMeta& meta, int64_t epoch);

// What one shard yields in one epoch, for framework iterators.
struct ShardEpochCount {
  int64_t samples = 0;  // real samples of the shard
  int64_t padded = 0;   // samples delivered including padding (== samples without padding)
  int64_t batches = 0;  // ceil(padded / batch_size); exact with padding, where epochs start at
                        // a batch boundary; without padding batches straddle epochs
};
ShardEpochCount shard_epoch_count(const ReaderMeta& meta, int shard_id, int batch_size);

class SampleOrder {
 public:
  // Validates the configuration; a bad one raises Error(kInvalidArgument) naming the argument.
  explicit SampleOrder(const OrderConfig& config);

  Pick next();                     // one sample; the position inside the batch is tracked here
  std::vector<Pick> next_batch();  // batch_size samples

  ReaderMeta meta() const;
  const OrderConfig& config() const { return cfg_; }
  // Epoch of the next sample to be delivered (padding counts to the ending epoch).
  int64_t epoch() const { return consumer_epoch_; }
  // Samples delivered so far in the current epoch, padding included.
  int64_t position_in_epoch() const { return returned_; }

  // Compact text state, versioned, tied to the configuration it came from: restoring it into
  // a SampleOrder of the same configuration continues with exactly the same picks.
  std::string serialize() const;
  // Raises Error(kInvalidArgument) for a malformed string or one from another configuration.
  void restore(const std::string& state);

 private:
  struct Segment {  // samples of one epoch inside the shuffle buffer, as absolute read counters
    uint64_t start, end;
  };
  int64_t read_one();  // the next sample of the sequential read stream (may push a segment)
  int64_t resolve(int64_t epoch, int64_t list_pos) const;
  void fill_buffer();

  OrderConfig cfg_;
  int64_t fill_ = 1;            // buffer capacity: initial_fill when shuffling, else 1
  int64_t padded_shard_ = 0;    // ceil(N / S): every shard pads up to this, then to a batch

  // Read side: the next sample read is position read_pos_ of the shard of epoch read_epoch_.
  int64_t read_epoch_ = 0;
  int64_t read_pos_ = 0;
  uint64_t total_read_ = 0;

  // Consumer side.
  std::vector<int64_t> buffer_;    // ring: read counter c lives in slot c % fill_
  std::deque<Segment> segments_;   // front: consumer_epoch_, then one per later epoch
  int64_t consumer_epoch_ = 0;
  int64_t returned_ = 0;           // delivered in this epoch, padding included
  int64_t pos_in_batch_ = 0;
  int64_t last_index_ = -1;        // the previous pick, repeated as padding
  uint64_t draws_ = 0;             // Philox counter of the shuffle-buffer draws
};

// A reader's whole checkpoint state: where its SampleOrder stands and the samples it has skipped
// as bad (on_error='skip'; they are never delivered again). Versioned and check-summed like
// SampleOrder's own state, which it contains.
std::string serialize_reader_state(const SampleOrder& order, const std::set<int64_t>& bad);
// Restores both or neither; raises Error(kInvalidArgument) for a malformed state or one from a
// reader with other arguments (naming the argument that differs).
void restore_reader_state(const std::string& state, SampleOrder& order, std::set<int64_t>& bad);

}  // namespace stoker::readers
