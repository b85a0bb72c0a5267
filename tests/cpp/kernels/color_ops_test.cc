// The colour operators on sequences (FHWC) and volumes (DHWC), which the Python tests cannot
// build yet: every frame must come out as the same operator gives for that frame alone (HWC).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/memory.h"
#include "ops/image/image_types.h"
#include "pipeline/operator.h"
#include "pipeline/schema.h"

namespace stoker {
namespace {

std::shared_ptr<MemoryPool> pool() {
  static auto p = std::make_shared<MemoryPool>(host_resource(), "color_ops_test");
  return p;
}

Batch run_op(const std::string& name, const std::map<std::string, ArgValue>& args, const Batch& in) {
  const OpSchema& schema = SchemaRegistry::get().at(name);
  OpSpec spec;
  spec.schema = &schema;
  for (const auto& [k, v] : args) spec.args[k] = schema.check_arg(k, v);
  spec.num_inputs = 1;
  spec.batch_size = static_cast<int>(in.size());
  auto op = schema.create(spec);
  Workspace ws;
  ws.inputs = {&in};
  ws.spec = &op->spec();
  ws.batch_size = spec.batch_size;
  ws.host_pool = pool().get();
  auto descs = op->setup(ws);
  ws.outputs.resize(1);
  ws.outputs[0].allocate(*pool(), descs[0].dtype, descs[0].shapes, descs[0].layout);
  for (size_t i = 0; i < in.size(); ++i) op->run_sample(ws, static_cast<int64_t>(i), 0);
  return ws.outputs[0];
}

Batch frames_batch(const std::string& layout, int64_t f, int64_t h, int64_t w) {
  Batch b;
  b.allocate(*pool(), DType::kUInt8, {{f, h, w, 3}}, layout);
  uint8_t* d = b.data<uint8_t>(0);
  for (int64_t k = 0; k < f * h * w * 3; ++k) d[k] = static_cast<uint8_t>((k * 37 + k / 7) & 255);
  return b;
}

Batch one_frame(const Batch& seq, int64_t frame) {
  const Shape& s = seq.shape(0);
  Batch b;
  b.allocate(*pool(), seq.dtype(), {{s[1], s[2], s[3]}}, "HWC");
  size_t bytes = b.sample_bytes(0);
  std::memcpy(b.data<uint8_t>(0), seq.data<uint8_t>(0) + frame * bytes, bytes);
  return b;
}

void expect_per_frame(const std::string& name, const std::map<std::string, ArgValue>& args,
                      const std::string& layout) {
  Batch seq = frames_batch(layout, 3, 5, 7);
  Batch out = run_op(name, args, seq);
  EXPECT_EQ(out.layout(), layout);
  ASSERT_EQ(out.shape(0).size(), 4u);
  EXPECT_EQ(out.shape(0)[0], 3);
  for (int64_t f = 0; f < 3; ++f) {
    Batch ref = run_op(name, args, one_frame(seq, f));
    size_t bytes = ref.sample_bytes(0);
    ASSERT_EQ(out.sample_bytes(0), 3 * bytes);
    EXPECT_EQ(0, std::memcmp(ref.data<uint8_t>(0), out.data<uint8_t>(0) + f * bytes, bytes))
        << name << " frame " << f;
  }
}

const int64_t kRGB = static_cast<int64_t>(ImageType::kRGB);
const int64_t kGray = static_cast<int64_t>(ImageType::kGray);
const int64_t kYCbCr = static_cast<int64_t>(ImageType::kYCbCr);

TEST(ColorOps, SequencesAndVolumesGetTheSameParametersOnEveryFrame) {
  for (std::string layout : {"FHWC", "DHWC"}) {
    expect_per_frame("hsv", {{"hue", 45.0}, {"saturation", 1.3}, {"value", 0.9}}, layout);
    expect_per_frame("hue", {{"hue", -30.0}}, layout);
    expect_per_frame("saturation", {{"saturation", 0.4}}, layout);
    expect_per_frame("color_twist", {{"hue", 10.0}, {"brightness", 1.1}, {"contrast", 0.7}}, layout);
    expect_per_frame("brightness_contrast", {{"brightness", 1.2}, {"contrast", 0.6}}, layout);
    expect_per_frame("brightness", {{"brightness_shift", 0.1}}, layout);
    expect_per_frame("contrast", {{"contrast", 1.5}}, layout);
    expect_per_frame("color_space_conversion", {{"image_type", kRGB}, {"output_type", kYCbCr}}, layout);
    expect_per_frame("color_space_conversion", {{"image_type", kRGB}, {"output_type", kGray}}, layout);
  }
}

TEST(ColorOps, ConversionToGrayDropsTheChannelsOfEveryFrame) {
  Batch out = run_op("color_space_conversion", {{"image_type", kRGB}, {"output_type", kGray}},
                     frames_batch("FHWC", 2, 3, 4));
  EXPECT_EQ(out.shape(0), (Shape{2, 3, 4, 1}));
}

}  // namespace
}  // namespace stoker
