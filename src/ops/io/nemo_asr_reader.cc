// readers.nemo_asr: speech data sets described by NeMo manifests (readers/nemo_asr.h), read
// and decoded as decoders.audio decodes (codecs/audio): the audio (the manifest entry's offset
// and duration of the file), and optionally its sample rate, its transcript (uint8 UTF-8 bytes,
// no terminator) and its entry index, in DALI's order.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "codecs/audio/audio_decoder.h"
#include "ops/audio/audio_args.h"
#include "ops/io/reader_base.h"
#include "readers/file_list.h"
#include "readers/nemo_asr.h"

namespace stoker {
namespace {

class NemoAsrReader : public SampleReader {
 public:
  explicit NemoAsrReader(const OpSpec& spec) : SampleReader(spec) {
    audio_args::require_sndfile(spec);
    params_.dtype = audio_args::decoded_dtype(spec);
    params_.downmix = spec.get<bool>("downmix");
    params_.quality = spec.get<double>("quality");
    params_.sample_rate = spec.get<double>("sample_rate");
    if (params_.sample_rate > 0) audio_args::require_soxr(spec);
    read_sample_rate_ = spec.get<bool>("read_sample_rate");
    read_text_ = spec.get<bool>("read_text");
    read_idxs_ = spec.get<bool>("read_idxs");
    const int want = 1 + read_sample_rate_ + read_text_ + read_idxs_;
    if (spec.num_outputs != want)
      fail(ErrorKind::kInternal, spec.display_name() + ": " + std::to_string(spec.num_outputs) +
                                     " outputs wired, " + std::to_string(want) + " expected");
    readers::nemo::Options o;
    o.manifest_filepaths = spec.get<std::vector<std::string>>("manifest_filepaths");
    if (o.manifest_filepaths.empty())
      spec.arg_error("manifest_filepaths", "is empty; give at least one NeMo manifest file.");
    o.min_duration = spec.get<double>("min_duration");
    o.max_duration = spec.get<double>("max_duration");
    o.read_text = read_text_;
    try {
      entries_ = readers::nemo::parse_manifests(o);
    } catch (const Error& e) {
      throw e.with_context(spec.display_name());
    }
    if (entries_.empty())
      fail(ErrorKind::kInvalidArgument,
           spec.display_name() + ": the manifests list no audio file" +
               (o.min_duration > 0 || o.max_duration > 0
                    ? " whose duration lies within min_duration=" + num(o.min_duration) +
                          " and max_duration=" + num(o.max_duration) + " s; widen the bounds"
                    : "; give manifests with at least one entry") + ".");
    init_order(static_cast<int64_t>(entries_.size()));
  }

  void run_batch(Workspace& ws) override {
    const std::vector<readers::Pick>& picks = this->picks();
    const int64_t n = static_cast<int64_t>(picks.size());
    std::vector<std::vector<uint8_t>> bytes(n);
    std::vector<codecs::audio::AudioInfo> infos(n);
    std::vector<codecs::audio::DecodeParams> params(n, params_);
    std::vector<Shape> shapes(n);
    std::vector<char> bad(n, 0);
    // Headers first (the shapes), then the batch is allocated at once and decoded into.
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const readers::nemo::Entry& e = entries_[picks[i].index];
      try {
        bytes[i] = readers::read_file(e.audio_filepath);
        try {
          infos[i] = codecs::audio::peek(bytes[i].data(), bytes[i].size());
          const readers::nemo::Segment seg =
              readers::nemo::segment_of(e, infos[i].frames, infos[i].sample_rate);
          infos[i].frames = seg.length;
          params[i].offset = seg.offset;
        } catch (const Error& err) {
          throw Error(err.kind(), "'" + e.audio_filepath + "': " + err.what());
        }
        const int64_t frames = codecs::audio::decoded_frames(infos[i], params[i]);
        shapes[i] = params_.downmix ? Shape{frames} : Shape{frames, infos[i].channels};
      } catch (const Error& err) {
        fail_sample(ws, i, e.audio_filepath, err);
        bad[i] = 1;
        shapes[i] = params_.downmix ? Shape{0} : Shape{0, 1};
      }
    });
    ws.outputs.assign(spec_.num_outputs, Batch());
    Batch& audio = ws.outputs[0];
    audio.allocate(*ws.host_pool, params_.dtype, shapes, "");
    int o = 1;
    Batch* rate = read_sample_rate_ ? &ws.outputs[o++] : nullptr;
    Batch* text = read_text_ ? &ws.outputs[o++] : nullptr;
    Batch* idx = read_idxs_ ? &ws.outputs[o++] : nullptr;
    if (rate) rate->allocate(*ws.host_pool, DType::kFloat32, std::vector<Shape>(n, Shape{}), "");
    if (text) {
      std::vector<Shape> ts(n);
      for (int64_t i = 0; i < n; ++i)
        ts[i] = {static_cast<int64_t>(entries_[picks[i].index].text.size())};
      text->allocate(*ws.host_pool, DType::kUInt8, ts, "");
    }
    if (idx) idx->allocate(*ws.host_pool, DType::kInt64, std::vector<Shape>(n, Shape{1}), "");
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const readers::nemo::Entry& e = entries_[picks[i].index];
      for (Batch& b : ws.outputs) b[i].source = e.audio_filepath;
      if (rate)
        *rate->data<float>(i) = params_.sample_rate > 0 ? static_cast<float>(params_.sample_rate)
                                                        : static_cast<float>(infos[i].sample_rate);
      if (text && !e.text.empty()) std::memcpy((*text)[i].data, e.text.data(), e.text.size());
      if (idx) *idx->data<int64_t>(i) = e.index;
      if (bad[i]) return;
      try {
        codecs::audio::decode(bytes[i].data(), bytes[i].size(), infos[i], params[i], audio[i].data);
      } catch (const Error& err) {
        fail_sample(ws, i, e.audio_filepath,
                    Error(err.kind(), "'" + e.audio_filepath + "': " + err.what()));
      }
      std::vector<uint8_t>().swap(bytes[i]);
    });
  }

 private:
  static std::string num(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

  // on_error='skip' records the sample (the iteration restarts without it); else raises.
  void fail_sample(Workspace& ws, int64_t i, const std::string& path, const Error& err) const {
    if (err.kind() == ErrorKind::kInternal || !ws.report_bad_sample(i, path, err.what()))
      throw err.with_context("sample " + std::to_string(i));
  }

  codecs::audio::DecodeParams params_;
  bool read_sample_rate_ = true, read_text_ = true, read_idxs_ = false;
  std::vector<readers::nemo::Entry> entries_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(readers_nemo_asr, "readers.nemo_asr") {
  add_reader_args(schema);
  schema.doc("Reads speech data sets described by NeMo manifests (one JSON object per line: "
             "audio_filepath, and optionally duration, offset, text) and decodes the audio as "
             "decoders.audio does. Outputs: the audio, then, as asked, its sample rate (float32), "
             "its transcript (uint8 UTF-8 bytes) and the entry's index (int64, shape (1,)).")
      .inputs(0, 0).outputs(4, {"audio", "sample_rate", "text", "idx"})
      .arg({.name = "manifest_filepaths", .type = ArgType::kStringList,
            .doc = "The NeMo manifest files, read one after the other.", .list_min = 1})
      .arg({.name = "sample_rate", .type = ArgType::kFloat, .default_value = -1.0,
            .doc = "The rate, in Hz, to resample every file to; <= 0 keeps each file's own."})
      .arg({.name = "quality", .type = ArgType::kFloat, .default_value = 50.0,
            .doc = audio_args::quality_doc(), .min = 0.0, .max = 100.0})
      .arg({.name = "downmix", .type = ArgType::kBool, .default_value = true,
            .doc = "Mix all channels down to one (their mean); the audio is then 1-D, else "
                   "(frames, channels)."})
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = int64_t(DType::kFloat32),
            .doc = "Audio type: INT16, INT32 or FLOAT (-1..1)."})
      .arg({.name = "min_duration", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "When > 0, entries whose manifest duration is shorter are left out (and "
                   "entries without a duration)."})
      .arg({.name = "max_duration", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "When > 0, entries whose manifest duration is longer are left out."})
      .arg({.name = "read_sample_rate", .type = ArgType::kBool, .default_value = true,
            .doc = "Output each sample's rate (float32 scalar)."})
      .arg({.name = "read_text", .type = ArgType::kBool, .default_value = true,
            .doc = "Output each transcript as uint8 UTF-8 bytes (empty when the entry has none)."})
      .arg({.name = "read_idxs", .type = ArgType::kBool, .default_value = false,
            .doc = "Output each entry's index among the kept entries of its manifest (int64, "
                   "shape (1,))."})
      .arg({.name = "normalize_text", .type = ArgType::kBool, .optional = true,
            .doc = "Accepted for DALI compatibility; unused (as in DALI)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<NemoAsrReader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
