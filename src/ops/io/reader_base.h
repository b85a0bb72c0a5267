// What every record reader operator shares: the schema arguments of readers (declared once in
// file_reader.cc), the SampleOrder that picks each batch's samples, on_error='skip'
// (bad samples are never delivered again; the next good ones take their place), and the
// checkpoint state (the order's position plus the skipped samples).
// A reader derived from SampleReader lists its samples (N), calls init_order(N) in its
// constructor, and in run_batch reads picks()[i].index for each position i.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pipeline/operator.h"
#include "readers/random_access_file.h"
#include "readers/sample_order.h"

namespace stoker {

// Declares shard_id, num_shards, random_shuffle, ... (defined in file_reader.cc).
void add_reader_args(OpSchema& schema);

// The data files of a record reader (TFRecord, RecordIO, WebDataset tar) and their optional
// index files: the list argument `path_arg`, and `index_arg` with none or one index per file.
// Checks that they pair up, opens each file into `files` and calls list(number, file, index)
// (index "" when there are none) to list its records; errors name the operator. `what` names
// one data file in messages (".rec file", "TFRecord file", "archive").
using RecordFiles = std::vector<std::unique_ptr<readers::RandomAccessFile>>;
void open_record_files(
    const OpSpec& spec, const char* path_arg, const char* index_arg, const std::string& what,
    RecordFiles& files,
    const std::function<void(int, const readers::RandomAccessFile&, const std::string&)>& list);

// Whether some of the files are read through URLs (their batch's ranges are then prefetched
// together: readers::prefetch).
inline bool any_remote(const RecordFiles& files) {
  for (const auto& f : files)
    if (f->remote()) return true;
  return false;
}

// The record readers' batch (each pick's record: .file, .ref.offset, .ref.size) fetched in one
// call when the files are URLs; nothing for local files.
template <class Records, class Picks>
void prefetch_records(const RecordFiles& files, const Records& records, const Picks& picks) {
  if (!any_remote(files)) return;
  std::vector<readers::ByteRange> ranges;
  ranges.reserve(picks.size());
  for (const auto& p : picks) {
    const auto& r = records[p.index];
    ranges.push_back({r.file, r.ref.offset, r.ref.size});
  }
  readers::prefetch(files, ranges);
}

class SampleReader : public Operator {
 public:
  explicit SampleReader(const OpSpec& spec) : Operator(spec) {}

  bool sample_wise() const override { return false; }

  void begin_iteration(int64_t batch_size) override {
    picks_.clear();
    for (int64_t i = 0; i < batch_size; ++i) picks_.push_back(next_good());
  }

  bool replace_samples(const std::vector<int64_t>& positions) override {
    for (int64_t p : positions) bad_.insert(picks_[p].index);
    if (static_cast<int64_t>(bad_.size()) >= num_samples_)
      fail(ErrorKind::kDecode, spec_.display_name() + ": every one of the " +
                                   std::to_string(num_samples_) +
                                   " samples was bad; nothing left to read");
    for (int64_t p : positions) picks_[p] = next_good();
    return true;
  }

  std::optional<ReaderMeta> reader_meta() const override { return order_->meta(); }

  // Between iterations: the picks of the batch just made are delivered, so the order's position
  // and the bad samples are the whole state.
  std::optional<std::string> save_state() const override {
    return readers::serialize_reader_state(*order_, bad_);
  }
  void restore_state(const std::string& state) override {
    try {
      readers::restore_reader_state(state, *order_, bad_);
    } catch (const Error& e) {
      throw e.with_context(spec_.display_name());
    }
    picks_.clear();
  }

 protected:
  // Builds the sample order over `num_samples` samples from the shared reader arguments.
  void init_order(int64_t num_samples) {
    num_samples_ = num_samples;
    readers::OrderConfig c;
    c.num_samples = num_samples;
    c.shard_id = spec_.get<int>("shard_id");
    c.num_shards = spec_.get<int>("num_shards");
    c.batch_size = spec_.batch_size;
    c.stick_to_shard = spec_.get<bool>("stick_to_shard");
    c.pad_last_batch = spec_.get<bool>("pad_last_batch");
    c.random_shuffle = spec_.get<bool>("random_shuffle");
    c.shuffle_after_epoch = spec_.get<bool>("shuffle_after_epoch");
    c.initial_fill = spec_.get<int>("initial_fill");
    c.seed = spec_.seed;
    try {
      order_ = std::make_unique<readers::SampleOrder>(c);
    } catch (const Error& e) {
      throw e.with_context(spec_.display_name());
    }
  }

  const std::vector<readers::Pick>& picks() const { return picks_; }
  int64_t num_samples() const { return num_samples_; }

 private:
  readers::Pick next_good() {
    for (;;) {
      readers::Pick p = order_->next();
      if (!bad_.count(p.index)) return p;
    }
  }

  int64_t num_samples_ = 0;
  std::unique_ptr<readers::SampleOrder> order_;
  std::vector<readers::Pick> picks_;
  std::set<int64_t> bad_;
};

}  // namespace stoker
