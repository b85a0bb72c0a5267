// Tests of src/codecs/nvjpeg: the run-time loader everywhere; on a GPU with nvJPEG, decoding
// the shared test JPEGs through the simple, decoupled (with roi) and hardware batched APIs,
// each compared with the CPU decoder (libjpeg-turbo, codecs::decode).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "codecs/image_codec.h"
#include "codecs/nvjpeg/nvjpeg_loader.h"
#include "core/cuda/cuda_memory.h"
#include "core/cuda/cuda_util.h"
#include "core/error.h"

#ifndef STOKER_TESTDATA
#error "STOKER_TESTDATA must name the shared test data folder"
#endif

namespace stoker::nvjpeg {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

const std::string kJpegDir = std::string(STOKER_TESTDATA) + "/images/jpeg";
// Baseline 4:2:0 photos of several shapes, one with an odd width (479).
const char* const kFiles[] = {
    "100/swan-3584559_640.jpg",
    "704/street-2116802_960_720.jpg",
    "241/dog-4366295_1920.jpg",
    "641/maracas-706753_1280.jpg",
};

// How close a GPU decode must be to libjpeg-turbo's. Both follow the JPEG standard, but the
// IDCT arithmetic and the chroma upsampling differ slightly, so values differ by a few levels
// at some edges. These bounds catch a wrong channel order, pitch, roi offset or colour
// conversion (which move the mean by tens of levels) without flagging those rounding differences.
constexpr double kMaxMeanAbsDiff = 1.0;
constexpr double kMaxShareOver2 = 0.02;  // share of values that differ by more than 2

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

template <class F>
Error catch_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no stoker::Error was thrown";
  return Error(ErrorKind::kInternal, "");
}

// ---- the loader, everywhere

TEST(NvjpegLoader, MissingLibraryIsAClearMessage) {
  Api api;
  std::string why;
  EXPECT_FALSE(detail::load({"libnvjpeg_stoker_missing.so.99", "libnvjpeg_stoker_missing.so"},
                            &api, &why));
  EXPECT_TRUE(contains(why, "nvJPEG (libnvjpeg_stoker_missing.so.99) was not found: install the "
                            "CUDA toolkit's nvJPEG or run on the CPU (device='cpu')"))
      << why;
  EXPECT_TRUE(contains(why, "STOKER_NVJPEG_LIBRARY")) << why;
  EXPECT_EQ(api.nvjpegDecode, nullptr);
}

TEST(NvjpegLoader, ALibraryThatIsNotNvjpegIsRefused) {
  Api api;
  std::string why;
  EXPECT_FALSE(detail::load({"libm.so.6"}, &api, &why));
  EXPECT_TRUE(contains(why, "lacks nvjpegGetProperty")) << why;
  EXPECT_TRUE(contains(why, "device='cpu'")) << why;
}

TEST(NvjpegLoader, CandidatesAndTheirOverride) {
  const char* old = std::getenv("STOKER_NVJPEG_LIBRARY");
  const std::string saved = old ? old : "";
  unsetenv("STOKER_NVJPEG_LIBRARY");
  EXPECT_EQ(detail::default_candidates(),
            (std::vector<std::string>{"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so"}));
  setenv("STOKER_NVJPEG_LIBRARY", "/opt/nv/libnvjpeg.so.13", 1);
  EXPECT_EQ(detail::default_candidates(), (std::vector<std::string>{"/opt/nv/libnvjpeg.so.13"}));
  if (old)
    setenv("STOKER_NVJPEG_LIBRARY", saved.c_str(), 1);
  else
    unsetenv("STOKER_NVJPEG_LIBRARY");
}

TEST(NvjpegLoader, AvailabilityIsReportedWithoutCrashing) {
  std::string why;
  bool ok = nvjpeg_available(&why);
  if (!ok) {
    EXPECT_FALSE(why.empty());
    Error e = catch_error([] { nvjpeg_api(); });
    EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
    EXPECT_EQ(std::string(e.what()), why);
    RecordProperty("nvjpeg", why);
    return;
  }
  EXPECT_TRUE(why.empty());
  const Api& api = nvjpeg_api();
  EXPECT_FALSE(api.path.empty());
  EXPECT_GE(api.version[0], 12) << api.path;
#define STOKER_EXPECT_RESOLVED(name, params) EXPECT_NE(api.name, nullptr) << #name;
#define STOKER_IGNORE(name, params)
  STOKER_NVJPEG_FUNCTIONS(STOKER_EXPECT_RESOLVED, STOKER_IGNORE)
#undef STOKER_EXPECT_RESOLVED
#undef STOKER_IGNORE
  RecordProperty("nvjpeg", api.path + " " + std::to_string(api.version[0]) + "." +
                               std::to_string(api.version[1]) + "." +
                               std::to_string(api.version[2]));
}

TEST(NvjpegLoader, StatusesBecomeErrorsOfTheRightKind) {
  struct Case {
    Status status;
    ErrorKind kind;
    const char* name;
  };
  for (const Case& c : {Case{Status::kBadJpeg, ErrorKind::kDecode, "NVJPEG_STATUS_BAD_JPEG"},
                        Case{Status::kIncompleteBitstream, ErrorKind::kDecode,
                             "NVJPEG_STATUS_INCOMPLETE_BITSTREAM"},
                        Case{Status::kJpegNotSupported, ErrorKind::kUnsupported,
                             "NVJPEG_STATUS_JPEG_NOT_SUPPORTED"},
                        Case{Status::kArchMismatch, ErrorKind::kUnsupported,
                             "NVJPEG_STATUS_ARCH_MISMATCH"},
                        Case{Status::kAllocatorFailure, ErrorKind::kOutOfMemory,
                             "NVJPEG_STATUS_ALLOCATOR_FAILURE"},
                        Case{Status::kInternalError, ErrorKind::kInternal,
                             "NVJPEG_STATUS_INTERNAL_ERROR"}}) {
    Error e = catch_error([&] { STOKER_NVJPEG_CHECK(c.status); });
    EXPECT_EQ(e.kind(), c.kind) << c.name;
    EXPECT_TRUE(contains(e.what(), c.name)) << e.what();
    EXPECT_TRUE(contains(e.what(), "c.status")) << e.what();  // the call as written
  }
  EXPECT_NO_THROW(STOKER_NVJPEG_CHECK(Status::kSuccess));
}

// ---- decoding, on a GPU with nvJPEG

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

struct Reference {
  std::string name;
  Bytes jpeg;
  int64_t height = 0, width = 0;
  Bytes rgb;  // HWC, libjpeg-turbo, no EXIF orientation applied (nvJPEG applies none)
};

Reference cpu_reference(const std::string& name) {
  Reference r;
  r.name = name;
  r.jpeg = read_file(kJpegDir + "/" + name);
  codecs::ImageInfo info = codecs::peek(r.jpeg.data(), r.jpeg.size());
  codecs::DecodeParams p;
  p.color = codecs::ColorOut::kRGB;
  p.apply_orientation = false;
  Shape s = codecs::output_shape(info, p);
  r.height = s[0];
  r.width = s[1];
  r.rgb.resize(volume(s));
  codecs::decode(r.jpeg.data(), r.jpeg.size(), info, p,
                 ImageView<uint8_t>(r.rgb.data(), r.height, r.width, 3));
  return r;
}

// Compares a GPU result (h x w x 3, dense) with the window of the reference at (y0, x0).
void expect_close(const Bytes& gpu, const Reference& ref, int64_t y0, int64_t x0, int64_t h,
                  int64_t w, const std::string& what) {
  ASSERT_EQ(gpu.size(), size_t(h * w * 3));
  double sum = 0;
  int64_t over2 = 0;
  int max = 0;
  for (int64_t y = 0; y < h; ++y) {
    const uint8_t* g = gpu.data() + y * w * 3;
    const uint8_t* c = ref.rgb.data() + ((y0 + y) * ref.width + x0) * 3;
    for (int64_t i = 0; i < w * 3; ++i) {
      int d = std::abs(int(g[i]) - int(c[i]));
      sum += d;
      over2 += d > 2;
      max = std::max(max, d);
    }
  }
  double n = double(h) * w * 3, mean = sum / n, share = over2 / n;
  std::cout << "[ nvjpeg   ] " << what << " " << ref.name << " (" << w << "x" << h
            << "): mean |diff| " << mean << ", max " << max << ", share > 2: " << share << "\n";
  EXPECT_LE(mean, kMaxMeanAbsDiff) << what << " " << ref.name;
  EXPECT_LE(share, kMaxShareOver2) << what << " " << ref.name << " (max diff " << max << ")";
}

// An owned nvJPEG object: destroyed through the loaded library when the test ends.
template <class T>
struct Owned {
  T h = nullptr;
  std::function<Status(T)> destroy;
  Owned(std::function<Status(T)> d) : destroy(std::move(d)) {}
  ~Owned() {
    if (h) destroy(h);
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
};

class NvjpegDecode : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_available(&why)) GTEST_SKIP() << "no usable GPU: " << why;
    if (!nvjpeg_available(&why)) GTEST_SKIP() << why;
    if (!fs::is_directory(kJpegDir)) GTEST_SKIP() << "no test JPEGs at " << kJpegDir;
    api_ = &nvjpeg_api();
    stream_ = CudaStream(0);
    pool_ = std::make_shared<StreamOrderedPool>(device_resource(0), "device:0");
    for (const char* f : kFiles)
      if (fs::exists(kJpegDir + "/" + f)) refs_.push_back(cpu_reference(f));
    ASSERT_FALSE(refs_.empty());
  }
  void TearDown() override {
    if (pool_) pool_->forget_stream(stream_.get());
  }

  // Creates a handle for `backend`, asking for interpolated chroma upsampling (libjpeg-turbo's
  // "fancy upsampling") where this nvJPEG knows the flag. Returns the status of the last try.
  Status create(Backend backend, Owned<Handle>* handle) {
    Status s = api_->nvjpegCreateEx(backend, nullptr, nullptr, kFlagUpsamplingWithInterpolation,
                                    &handle->h);
    if (s != Status::kSuccess) s = api_->nvjpegCreateEx(backend, nullptr, nullptr, 0, &handle->h);
    return s;
  }

  // Device memory for an h x w RGB image, described as nvJPEG's interleaved output.
  std::shared_ptr<void> rgb_buffer(int64_t h, int64_t w, Image* img) {
    auto buf = pool_->allocate(size_t(h * w * 3), stream_.get());
    *img = Image{};
    img->channel[0] = static_cast<unsigned char*>(buf.get());
    img->pitch[0] = size_t(w * 3);
    return buf;
  }

  Bytes to_host(const std::shared_ptr<void>& buf, size_t bytes) {
    Bytes out(bytes);
    cuda_memcpy_async(out.data(), buf.get(), bytes, stream_.get());
    stream_.synchronize();
    return out;
  }

  const Api* api_ = nullptr;
  CudaStream stream_;
  std::shared_ptr<StreamOrderedPool> pool_;
  std::vector<Reference> refs_;
};

TEST_F(NvjpegDecode, SimpleApiMatchesCpuDecoder) {
  const Api& a = *api_;
  Owned<Handle> handle(a.nvjpegDestroy);
  STOKER_NVJPEG_CHECK(create(Backend::kDefault, &handle));
  Owned<JpegState> state(a.nvjpegJpegStateDestroy);
  STOKER_NVJPEG_CHECK(a.nvjpegJpegStateCreate(handle.h, &state.h));
  for (const Reference& r : refs_) {
    int comps = 0;
    ChromaSubsampling css{};
    int widths[kMaxComponent] = {}, heights[kMaxComponent] = {};
    STOKER_NVJPEG_CHECK(a.nvjpegGetImageInfo(handle.h, r.jpeg.data(), r.jpeg.size(), &comps, &css,
                                             widths, heights));
    EXPECT_EQ(comps, 3);
    ASSERT_EQ(widths[0], r.width);
    ASSERT_EQ(heights[0], r.height);
    Image img;
    auto buf = rgb_buffer(r.height, r.width, &img);
    STOKER_NVJPEG_CHECK(a.nvjpegDecode(handle.h, state.h, r.jpeg.data(), r.jpeg.size(),
                                       OutputFormat::kRGBI, &img,
                                       static_cast<Stream>(stream_.get())));
    expect_close(to_host(buf, size_t(r.height * r.width * 3)), r, 0, 0, r.height, r.width,
                 "nvjpegDecode");
  }
}

TEST_F(NvjpegDecode, DecoupledApiWithRoiMatchesCpuCrop) {
  const Api& a = *api_;
  Owned<Handle> handle(a.nvjpegDestroy);
  STOKER_NVJPEG_CHECK(create(Backend::kDefault, &handle));
  Owned<JpegDecoder> decoder(a.nvjpegDecoderDestroy);
  STOKER_NVJPEG_CHECK(a.nvjpegDecoderCreate(handle.h, Backend::kHybrid, &decoder.h));
  Owned<JpegState> state(a.nvjpegJpegStateDestroy);
  STOKER_NVJPEG_CHECK(a.nvjpegDecoderStateCreate(handle.h, decoder.h, &state.h));
  Owned<BufferPinned> pinned(a.nvjpegBufferPinnedDestroy);
  STOKER_NVJPEG_CHECK(a.nvjpegBufferPinnedCreate(handle.h, nullptr, &pinned.h));
  Owned<BufferDevice> device(a.nvjpegBufferDeviceDestroy);
  STOKER_NVJPEG_CHECK(a.nvjpegBufferDeviceCreate(handle.h, nullptr, &device.h));
  STOKER_NVJPEG_CHECK(a.nvjpegStateAttachPinnedBuffer(state.h, pinned.h));
  STOKER_NVJPEG_CHECK(a.nvjpegStateAttachDeviceBuffer(state.h, device.h));
  Owned<JpegStream> js(a.nvjpegJpegStreamDestroy);
  STOKER_NVJPEG_CHECK(a.nvjpegJpegStreamCreate(handle.h, &js.h));
  Owned<DecodeParams> params(a.nvjpegDecodeParamsDestroy);
  STOKER_NVJPEG_CHECK(a.nvjpegDecodeParamsCreate(handle.h, &params.h));
  STOKER_NVJPEG_CHECK(a.nvjpegDecodeParamsSetOutputFormat(params.h, OutputFormat::kRGBI));

  for (const Reference& r : refs_) {
    STOKER_NVJPEG_CHECK(
        a.nvjpegJpegStreamParse(handle.h, r.jpeg.data(), r.jpeg.size(), 0, 0, js.h));
    unsigned w = 0, h = 0, n = 0;
    STOKER_NVJPEG_CHECK(a.nvjpegJpegStreamGetFrameDimensions(js.h, &w, &h));
    STOKER_NVJPEG_CHECK(a.nvjpegJpegStreamGetComponentsNum(js.h, &n));
    EXPECT_EQ(int64_t(w), r.width);
    EXPECT_EQ(int64_t(h), r.height);
    EXPECT_EQ(n, 3u);
    JpegEncoding enc{};
    STOKER_NVJPEG_CHECK(a.nvjpegJpegStreamGetJpegEncoding(js.h, &enc));
    EXPECT_EQ(enc, JpegEncoding::kBaselineDct);

    // An odd-sized window away from the corners.
    const int64_t x0 = r.width / 4 + 1, y0 = r.height / 5 + 3;
    const int64_t rw = r.width / 2 - 1, rh = r.height / 3 + 1;
    STOKER_NVJPEG_CHECK(a.nvjpegDecodeParamsSetROI(params.h, int(x0), int(y0), int(rw), int(rh)));
    int unsupported = -1;
    STOKER_NVJPEG_CHECK(a.nvjpegDecoderJpegSupported(decoder.h, js.h, params.h, &unsupported));
    ASSERT_EQ(unsupported, 0) << r.name << ": the hybrid decoder refuses it";

    Image img;
    auto buf = rgb_buffer(rh, rw, &img);
    auto s = static_cast<Stream>(stream_.get());
    STOKER_NVJPEG_CHECK(a.nvjpegDecodeJpegHost(handle.h, decoder.h, state.h, params.h, js.h));
    STOKER_NVJPEG_CHECK(a.nvjpegDecodeJpegTransferToDevice(handle.h, decoder.h, state.h, js.h, s));
    STOKER_NVJPEG_CHECK(a.nvjpegDecodeJpegDevice(handle.h, decoder.h, state.h, &img, s));
    expect_close(to_host(buf, size_t(rh * rw * 3)), r, y0, x0, rh, rw, "decoupled+roi");
  }
}

TEST_F(NvjpegDecode, HardwareBatchMatchesCpuDecoder) {
  const Api& a = *api_;
  Owned<Handle> handle(a.nvjpegDestroy);
  Status st = create(Backend::kHardware, &handle);
  if (st == Status::kArchMismatch || st == Status::kJpegNotSupported ||
      st == Status::kImplementationNotSupported)
    GTEST_SKIP() << "no hardware JPEG decoder on this GPU (" << status_name(st) << ")";
  STOKER_NVJPEG_CHECK(st);
  unsigned engines = 0, cores = 0;
  STOKER_NVJPEG_CHECK(a.nvjpegGetHardwareDecoderInfo(handle.h, &engines, &cores));
  std::cout << "[ nvjpeg   ] hardware decoder: " << engines << " engines x " << cores
            << " cores\n";
  RecordProperty("hw_engines", int(engines));

  Owned<JpegStream> js(a.nvjpegJpegStreamDestroy);
  STOKER_NVJPEG_CHECK(a.nvjpegJpegStreamCreate(handle.h, &js.h));
  std::vector<const Reference*> batch;
  for (const Reference& r : refs_) {
    STOKER_NVJPEG_CHECK(
        a.nvjpegJpegStreamParse(handle.h, r.jpeg.data(), r.jpeg.size(), 0, 0, js.h));
    int unsupported = -1;
    STOKER_NVJPEG_CHECK(a.nvjpegDecodeBatchedSupported(handle.h, js.h, &unsupported));
    EXPECT_EQ(unsupported, 0) << r.name << ": baseline 4:2:0, the engines should take it";
    if (unsupported == 0) batch.push_back(&r);
  }
  ASSERT_FALSE(batch.empty());

  Owned<JpegState> state(a.nvjpegJpegStateDestroy);
  STOKER_NVJPEG_CHECK(a.nvjpegJpegStateCreate(handle.h, &state.h));
  const int n = int(batch.size());
  STOKER_NVJPEG_CHECK(
      a.nvjpegDecodeBatchedInitialize(handle.h, state.h, n, 1, OutputFormat::kRGBI));
  std::vector<const unsigned char*> data;
  std::vector<size_t> lengths;
  std::vector<Image> images(n);
  std::vector<std::shared_ptr<void>> buffers;
  for (int i = 0; i < n; ++i) {
    data.push_back(batch[i]->jpeg.data());
    lengths.push_back(batch[i]->jpeg.size());
    buffers.push_back(rgb_buffer(batch[i]->height, batch[i]->width, &images[i]));
  }
  // Twice: the second run reuses the state, as a pipeline does every iteration.
  for (int round = 0; round < 2; ++round) {
    STOKER_NVJPEG_CHECK(a.nvjpegDecodeBatched(handle.h, state.h, data.data(), lengths.data(),
                                              images.data(), static_cast<Stream>(stream_.get())));
    for (int i = 0; i < n; ++i) {
      const Reference& r = *batch[i];
      expect_close(to_host(buffers[i], size_t(r.height * r.width * 3)), r, 0, 0, r.height,
                   r.width, "hardware batch, round " + std::to_string(round));
    }
  }
}

TEST_F(NvjpegDecode, DataThatIsNotAJpegIsADecodeErrorAndTheHandleStaysUsable) {
  const Api& a = *api_;
  Owned<Handle> handle(a.nvjpegDestroy);
  STOKER_NVJPEG_CHECK(create(Backend::kDefault, &handle));
  Owned<JpegState> state(a.nvjpegJpegStateDestroy);
  STOKER_NVJPEG_CHECK(a.nvjpegJpegStateCreate(handle.h, &state.h));
  Bytes junk(4096, 0x5a);
  int comps = 0;
  ChromaSubsampling css{};
  int widths[kMaxComponent] = {}, heights[kMaxComponent] = {};
  Error e = catch_error([&] {
    STOKER_NVJPEG_CHECK(a.nvjpegGetImageInfo(handle.h, junk.data(), junk.size(), &comps, &css,
                                             widths, heights));
  });
  // kDecode (BAD_JPEG) is what nvJPEG documents; kUnsupported would still send the sample to
  // the CPU decoder, which then reports the bad data itself.
  EXPECT_TRUE(e.kind() == ErrorKind::kDecode || e.kind() == ErrorKind::kUnsupported) << e.what();
  EXPECT_TRUE(contains(e.what(), "nvjpegGetImageInfo")) << e.what();
  std::cout << "[ nvjpeg   ] not a JPEG: " << e.what() << "\n";

  const Reference& r = refs_.front();
  Image img;
  auto buf = rgb_buffer(r.height, r.width, &img);
  STOKER_NVJPEG_CHECK(a.nvjpegDecode(handle.h, state.h, r.jpeg.data(), r.jpeg.size(),
                                     OutputFormat::kRGBI, &img,
                                     static_cast<Stream>(stream_.get())));
  expect_close(to_host(buf, size_t(r.height * r.width * 3)), r, 0, 0, r.height, r.width,
               "after an error");
}

}  // namespace
}  // namespace stoker::nvjpeg
