// Audio decoding through libsndfile, from memory (sf_open_virtual over the caller's bytes): WAV
// (8/16/24/32-bit integers, float32/64, IMA/MS ADPCM, u-law, a-law, WAVE_FORMAT_EXTENSIBLE),
// RF64, AIFF, FLAC, OGG (Vorbis, Opus) and MP3 where this libsndfile was built with them.
//
// Errors: libsndfile keeps the error of a failed open in a process-wide variable, so the
// message is taken as a number (sf_error) and worded by sf_error_number, which reads only
// constant tables; nothing is printed.
#include "codecs/audio/audio_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "codecs/audio/pcm.h"
#include "core/convert.h"
#include "core/error.h"

#ifdef STOKER_WITH_SNDFILE
#include <sndfile.h>
#endif

namespace stoker::codecs::audio {

int64_t decoded_frames(const AudioInfo& info, const DecodeParams& p) {
  if (p.sample_rate > 0 && p.sample_rate != static_cast<double>(info.sample_rate))
    return resampled_length(info.frames, info.sample_rate, p.sample_rate);
  return info.frames;
}

#ifndef STOKER_WITH_SNDFILE

bool sndfile_built_in() { return false; }

[[noreturn]] static void fail_no_sndfile() {
  fail(ErrorKind::kUnsupported,
       "stoker was built without libsndfile, so it cannot decode audio; install libsndfile1-dev "
       "and rebuild");
}
class OpenAudio {};
void OpenAudioDeleter::operator()(OpenAudio* a) const { delete a; }
AudioInfo peek(const uint8_t*, size_t, const AudioLimits&, OpenAudioPtr*) { fail_no_sndfile(); }
void decode(const uint8_t*, size_t, const AudioInfo&, const DecodeParams&, void*, OpenAudioPtr) {
  fail_no_sndfile();
}

#else  // STOKER_WITH_SNDFILE

bool sndfile_built_in() { return true; }

namespace {

struct MemStream {
  const uint8_t* data;
  sf_count_t size;
  sf_count_t pos;
};

sf_count_t vio_length(void* u) { return static_cast<MemStream*>(u)->size; }
sf_count_t vio_seek(sf_count_t offset, int whence, void* u) {
  auto* m = static_cast<MemStream*>(u);
  sf_count_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->size;
  if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return -1;
  const sf_count_t to = base + offset;
  if (to < 0 || to > m->size) return -1;
  m->pos = to;
  return to;
}
sf_count_t vio_read(void* dst, sf_count_t n, void* u) {
  auto* m = static_cast<MemStream*>(u);
  n = std::max<sf_count_t>(0, std::min(n, m->size - m->pos));
  if (n > 0) std::memcpy(dst, m->data + m->pos, static_cast<size_t>(n));
  m->pos += n;
  return n;
}
sf_count_t vio_tell(void* u) { return static_cast<MemStream*>(u)->pos; }

// An open SNDFILE over memory, closed on scope exit.
class Handle {
 public:
  Handle(const uint8_t* data, size_t size) : mem_{data, static_cast<sf_count_t>(size), 0} {
    if (size == 0)
      fail(ErrorKind::kDecode, "the data is empty (0 bytes); an audio file (WAV, FLAC, OGG, ...) "
                               "was expected");
    SF_VIRTUAL_IO io{&vio_length, &vio_seek, &vio_read, nullptr, &vio_tell};
    std::memset(&info_, 0, sizeof(info_));
    file_ = sf_open_virtual(&io, SFM_READ, &info_, &mem_);
    if (!file_) {
      const int code = sf_error(nullptr);
      std::string why = sf_error_number(code);
      if (!why.empty() && why.back() == '.') why.pop_back();
      fail(ErrorKind::kDecode, "not a readable audio file (libsndfile: " + why +
                                   "); decoders.audio reads WAV, FLAC, OGG (Vorbis, Opus), MP3 "
                                   "and the other formats of libsndfile " +
                                   std::string(sf_version_string()));
    }
  }
  ~Handle() { if (file_) sf_close(file_); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  SNDFILE* get() const { return file_; }
  const SF_INFO& info() const { return info_; }

 private:
  MemStream mem_;
  SF_INFO info_;
  SNDFILE* file_ = nullptr;
};

std::string format_name(int format) {
  std::string out;
  SF_FORMAT_INFO f;
  std::memset(&f, 0, sizeof(f));
  f.format = format & SF_FORMAT_TYPEMASK;
  if (sf_command(nullptr, SFC_GET_FORMAT_INFO, &f, sizeof(f)) == 0 && f.name) out = f.name;
  std::memset(&f, 0, sizeof(f));
  f.format = format & SF_FORMAT_SUBMASK;
  if (sf_command(nullptr, SFC_GET_FORMAT_INFO, &f, sizeof(f)) == 0 && f.name)
    out += std::string(out.empty() ? "" : ", ") + f.name;
  return out.empty() ? "unknown format" : out;
}

AudioInfo check_info(const SF_INFO& sf, size_t size, const AudioLimits& limits) {
  AudioInfo info;
  info.frames = sf.frames;
  info.channels = sf.channels;
  info.sample_rate = sf.samplerate;
  info.format = format_name(sf.format);
  if (sf.channels < 1 || sf.channels > limits.max_channels)
    fail(ErrorKind::kDecode, "the header gives " + std::to_string(sf.channels) +
                                 " channels; 1 to " + std::to_string(limits.max_channels) +
                                 " were expected: the file is corrupt");
  if (sf.samplerate < 1 || sf.samplerate > limits.max_sample_rate)
    fail(ErrorKind::kDecode, "the header gives a sample rate of " + std::to_string(sf.samplerate) +
                                 " Hz; 1 to " + std::to_string(limits.max_sample_rate) +
                                 " Hz was expected: the file is corrupt");
  const double values = static_cast<double>(sf.frames) * sf.channels;
  const double most = static_cast<double>(size) * limits.max_values_per_byte + (1 << 20);
  if (sf.frames < 0 || values > most)
    fail(ErrorKind::kDecode, "the header claims " + std::to_string(sf.frames) + " frames of " +
                                 std::to_string(sf.channels) + " channels in " +
                                 std::to_string(size) + " bytes of " + info.format +
                                 ", more than any encoding holds: the file is corrupt");
  return info;
}

template <typename T>
sf_count_t read_frames(SNDFILE* f, T* out, sf_count_t frames) {
  if constexpr (std::is_same_v<T, int16_t>) return sf_readf_short(f, out, frames);
  else if constexpr (std::is_same_v<T, int32_t>) return sf_readf_int(f, out, frames);
  else return sf_readf_float(f, out, frames);
}

// Formats whose decoder gives float samples (and converts them to integers itself).
bool decodes_to_float(int format) {
  switch (format & SF_FORMAT_SUBMASK) {
    case SF_FORMAT_VORBIS: case SF_FORMAT_OPUS:
#ifdef SF_FORMAT_MPEG_LAYER_III
    case SF_FORMAT_MPEG_LAYER_I: case SF_FORMAT_MPEG_LAYER_II: case SF_FORMAT_MPEG_LAYER_III:
#endif
      return true;
    default:
      return false;
  }
}

void check_read(sf_count_t got, const AudioInfo& info) {
  if (got != info.frames)
    fail(ErrorKind::kDecode, "the data ends after " + std::to_string(std::max<sf_count_t>(got, 0)) +
                                 " of the " + std::to_string(info.frames) + " frames the header "
                                 "gives (" + info.format + "): the file is truncated or corrupt");
}

}  // namespace

class OpenAudio {
 public:
  OpenAudio(const uint8_t* data, size_t size) : handle(data, size) {}
  Handle handle;
};
void OpenAudioDeleter::operator()(OpenAudio* a) const { delete a; }

namespace {

// A decoder of these bytes: the one peek() kept, else a new one.
Handle& open_for_decode(const uint8_t* data, size_t size, OpenAudioPtr& opened) {
  if (!opened) opened.reset(new OpenAudio(data, size));
  return opened->handle;
}

}  // namespace

AudioInfo peek(const uint8_t* data, size_t size, const AudioLimits& limits, OpenAudioPtr* keep) {
  OpenAudioPtr a(new OpenAudio(data, size));
  AudioInfo info = check_info(a->handle.info(), size, limits);
  if (keep) *keep = std::move(a);
  return info;
}

void decode(const uint8_t* data, size_t size, const AudioInfo& info, const DecodeParams& p,
            void* out, OpenAudioPtr opened) {
  if (p.dtype != DType::kInt16 && p.dtype != DType::kInt32 && p.dtype != DType::kFloat32)
    fail(ErrorKind::kInvalidArgument, std::string("audio decodes to int16, int32 or float32, not ") +
                                          dtype_name(p.dtype));
  Handle& h = open_for_decode(data, size, opened);
  const SF_INFO& sf = h.info();
  if (sf.frames < p.offset + info.frames || p.offset < 0 || sf.channels != info.channels ||
      sf.samplerate != info.sample_rate)
    fail(ErrorKind::kInternal, "audio decode: the header differs from the one peeked");
  if (p.offset > 0 && sf_seek(h.get(), p.offset, SEEK_SET) != p.offset)
    fail(ErrorKind::kDecode, "cannot seek to frame " + std::to_string(p.offset) + " of " +
                                 std::to_string(sf.frames) + " (" + info.format +
                                 "): the file is truncated or corrupt");
  const bool resampling = p.sample_rate > 0 && p.sample_rate != static_cast<double>(info.sample_rate);
  const bool mixing = p.downmix && info.channels > 1;
  if (!resampling && !mixing && p.dtype != DType::kFloat32 && decodes_to_float(sf.format)) {
    // Lossy codecs decode to float, and libsndfile's conversion to integers wraps a value past
    // full scale around (a Vorbis peak at -1.014 reads as +32300, in DALI too) and ignores
    // SFC_SET_CLIPPING. So: read float and convert as libsndfile does (lrintf of the float
    // product), saturated.
    thread_local std::vector<float> decoded;
    const size_t n = static_cast<size_t>(info.frames) * static_cast<size_t>(info.channels);
    decoded.resize(n);
    check_read(sf_readf_float(h.get(), decoded.data(), info.frames), info);
    if (p.dtype == DType::kInt16) {
      auto* o = static_cast<int16_t*>(out);
      for (size_t k = 0; k < n; ++k) o[k] = convert_sat<int16_t>(decoded[k] * 32767.0f);
    } else {
      auto* o = static_cast<int32_t*>(out);
      for (size_t k = 0; k < n; ++k) o[k] = convert_sat<int32_t>(decoded[k] * 2147483647.0f);
    }
    return;
  }
  if (!resampling && !mixing) {
    // libsndfile's conversion, as DALI; float and double WAV data read as integers saturates
    // (SFC_SET_CLIPPING) instead of wrapping around as in DALI.
    if (p.dtype != DType::kFloat32) sf_command(h.get(), SFC_SET_CLIPPING, nullptr, SF_TRUE);
    visit_dtype(p.dtype, [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, int16_t> || std::is_same_v<T, int32_t> || std::is_same_v<T, float>)
        check_read(read_frames(h.get(), static_cast<T*>(out), info.frames), info);
    });
    return;
  }
  thread_local std::vector<float> decoded, mixed;
  const size_t n = static_cast<size_t>(info.frames) * static_cast<size_t>(info.channels);
  decoded.resize(n);
  check_read(sf_readf_float(h.get(), decoded.data(), info.frames), info);
  const float* signal = decoded.data();
  int channels = info.channels;
  if (mixing && resampling) {
    mixed.resize(static_cast<size_t>(info.frames));
    downmix(mixed.data(), decoded.data(), info.frames, info.channels);
    signal = mixed.data();
    channels = 1;
  } else if (mixing) {
    visit_dtype(p.dtype, [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, int16_t> || std::is_same_v<T, int32_t> || std::is_same_v<T, float>)
        downmix(static_cast<T*>(out), decoded.data(), info.frames, info.channels);
    });
    return;
  }
  const int64_t out_frames = decoded_frames(info, p);
  if (p.dtype == DType::kFloat32) {
    resample(static_cast<float*>(out), out_frames, signal, info.frames, channels, info.sample_rate,
             p.sample_rate, p.quality);
    return;
  }
  thread_local std::vector<float> resampled;
  const size_t m = static_cast<size_t>(out_frames) * static_cast<size_t>(channels);
  resampled.resize(m);
  resample(resampled.data(), out_frames, signal, info.frames, channels, info.sample_rate,
           p.sample_rate, p.quality);
  if (p.dtype == DType::kInt16) {
    auto* o = static_cast<int16_t*>(out);
    for (size_t k = 0; k < m; ++k) o[k] = pcm_from_float<int16_t>(resampled[k]);
  } else {
    auto* o = static_cast<int32_t*>(out);
    for (size_t k = 0; k < m; ++k) o[k] = pcm_from_float<int32_t>(resampled[k]);
  }
}

#endif  // STOKER_WITH_SNDFILE

}  // namespace stoker::codecs::audio
