// decoders.audio: encoded audio (WAV, FLAC, OGG, ...) to samples and their sample rate, on the
// CPU. Headers are read at setup (shapes); the data is decoded, mixed down and resampled in
// run_sample (codecs/audio).
//
// As DALI 2.4: the audio is (frames, channels) without downmix, even for one channel, and
// (frames,) with it; no layout; the rate is a float32 scalar (the target rate when resampling).
// Where stoker differs: a sample_rate <= 0 is an error (DALI outputs the audio unchanged and
// reports the rate given), and float data read as integers saturates (DALI wraps around).
#include <cmath>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "codecs/audio/audio_decoder.h"
#include "ops/audio/audio_args.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

std::string describe_source(const Batch& b, size_t i) {
  return b[i].source.empty() ? "" : " ('" + b[i].source + "')";
}

class AudioDecoder : public Operator {
 public:
  explicit AudioDecoder(const OpSpec& spec) : Operator(spec) {
    audio_args::require_sndfile(spec);
    params_.dtype = audio_args::decoded_dtype(spec);
    params_.downmix = spec.get<bool>("downmix");
    params_.quality = spec.get<double>("quality");
    if (spec.has("sample_rate") || spec.is_tensor_arg("sample_rate")) audio_args::require_soxr(spec);
  }

  bool setup_reads_input_data() const override { return true; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (in.dtype() != DType::kUInt8)
      spec_.arg_error("input", std::string("must be encoded audio bytes (uint8), got ") +
                                   dtype_name(in.dtype()) + "; feed the file's bytes, e.g. from "
                                   "fn.readers.file.");
    const size_t n = in.size();
    infos_.assign(n, {});
    opened_.clear();
    opened_.resize(n);
    params_of_.assign(n, params_);
    OutputDesc audio{params_.dtype, "", {}}, rate{DType::kFloat32, "", {}};
    // The headers, read on the worker threads (libsndfile parses a whole Ogg page chain to count
    // frames: on one thread this stage would keep the workers waiting); errors are handled in
    // sample order below.
    std::vector<std::exception_ptr> peek_errors(n);
    ws.thread_pool->parallel_for(static_cast<int64_t>(n), [&](int64_t i, int) {
      if (in.shape(i).size() != 1) return;
      try {
        infos_[i] = codecs::audio::peek(in.data<uint8_t>(i), in.sample_bytes(i), {}, &opened_[i]);
      } catch (...) {
        peek_errors[i] = std::current_exception();
      }
    });
    for (size_t i = 0; i < n; ++i) {
      if (in.shape(i).size() != 1)
        spec_.arg_error("input", "must be 1-D encoded bytes, but sample " + std::to_string(i) +
                                     describe_source(in, i) + " has shape " + to_string(in.shape(i)) +
                                     ".");
      if (ws.has_arg("sample_rate")) {
        const double r = ws.scalar_arg("sample_rate", static_cast<int64_t>(i), 0.0);
        if (!(r > 0) || !std::isfinite(r))
          spec_.arg_error("sample_rate", "must be a positive number of Hz, got " + repr(r) +
                                             " for sample " + std::to_string(i) +
                                             describe_source(in, i) +
                                             "; leave it out to keep each file's own rate.");
        params_of_[i].sample_rate = r;
      }
      Shape shape;
      try {
        if (peek_errors[i]) std::rethrow_exception(peek_errors[i]);
        const int64_t frames = codecs::audio::decoded_frames(infos_[i], params_of_[i]);
        shape = params_.downmix ? Shape{frames} : Shape{frames, infos_[i].channels};
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kInternal || !ws.report_bad_sample(i, in[i].source, e.what()))
          throw sample_error(e, in, i);
        infos_[i] = {};  // skipped: the iteration restarts without it
        opened_[i].reset();
        shape = params_.downmix ? Shape{0} : Shape{0, 1};
      }
      audio.shapes.push_back(shape);
      rate.shapes.push_back(Shape{});
    }
    return {audio, rate};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const codecs::audio::AudioInfo& info = infos_[i];
    const codecs::audio::DecodeParams& p = params_of_[i];
    *ws.output(1).data<float>(i) =
        p.sample_rate > 0 ? static_cast<float>(p.sample_rate) : static_cast<float>(info.sample_rate);
    if (info.channels == 0) return;  // skipped at setup
    codecs::audio::decode(in.data<uint8_t>(i), in.sample_bytes(i), info, p, ws.output(0)[i].data,
                          std::move(opened_[i]));
  }

 private:
  static std::string repr(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }

  Error sample_error(const Error& e, const Batch& in, size_t i) const {
    return Error(e.kind(), spec_.display_name() + ", sample " + std::to_string(i) +
                               describe_source(in, i) + ": " + e.what());
  }

  codecs::audio::DecodeParams params_;
  std::vector<codecs::audio::AudioInfo> infos_;
  std::vector<codecs::audio::OpenAudioPtr> opened_;  // peek()'s open decoders, handed to decode()
  std::vector<codecs::audio::DecodeParams> params_of_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(decoders_audio, "decoders.audio") {
  schema.doc("Decodes audio (WAV, FLAC, OGG Vorbis and Opus, MP3, through libsndfile) to its "
             "samples and sample rate, optionally mixed down to mono and resampled (libsoxr). "
             "Outputs: the audio, (frames, channels) or (frames,) with downmix, and the sample "
             "rate in Hz (float32).")
      .inputs(1, 1, {"encoded"}).outputs(2, {"audio", "sample_rate"})
      .arg({.name = "downmix", .type = ArgType::kBool, .default_value = false,
            .doc = "Mix all channels down to one (their mean); the output is then 1-D."})
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = int64_t(DType::kFloat32),
            .doc = "Output type: INT16, INT32 or FLOAT (-1..1). Integer files read as FLOAT are "
                   "divided by 2^(bits-1); FLOAT to integers is round(v * max), saturated."})
      .arg({.name = "sample_rate", .type = ArgType::kFloat, .optional = true,
            .doc = "The rate, in Hz, to resample every file to (per sample as a tensor). Left "
                   "out, each file keeps its own rate.", .tensor = true})
      .arg({.name = "quality", .type = ArgType::kFloat, .default_value = 50.0,
            .doc = audio_args::quality_doc(), .min = 0.0, .max = 100.0})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<AudioDecoder>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
