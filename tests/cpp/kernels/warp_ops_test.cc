// The warp-family operators on sequences (FHWC), which the Python tests cannot build yet: each
// frame must come out as the operator gives for that frame alone (HWC), with one transform for
// all frames.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/memory.h"
#include "pipeline/operator.h"
#include "pipeline/schema.h"

namespace stoker {
namespace {

std::shared_ptr<MemoryPool> warp_pool() {
  static auto p = std::make_shared<MemoryPool>(host_resource(), "warp_ops_test");
  return p;
}

Batch run_warp_op(const std::string& name, const std::map<std::string, ArgValue>& args, const Batch& in) {
  const OpSchema& schema = SchemaRegistry::get().at(name);
  OpSpec spec;
  spec.schema = &schema;
  for (const auto& def : schema.args())
    if (def.default_value) spec.args[def.name] = *def.default_value;
  for (const auto& [k, v] : args) spec.args[k] = schema.check_arg(k, v);
  spec.num_inputs = 1;
  spec.batch_size = static_cast<int>(in.size());
  auto op = schema.create(spec);
  Workspace ws;
  ws.inputs = {&in};
  ws.spec = &op->spec();
  ws.batch_size = spec.batch_size;
  ws.host_pool = warp_pool().get();
  auto descs = op->setup(ws);
  ws.outputs.resize(1);
  ws.outputs[0].allocate(*warp_pool(), descs[0].dtype, descs[0].shapes, descs[0].layout);
  for (size_t i = 0; i < in.size(); ++i) op->run_sample(ws, static_cast<int64_t>(i), 0);
  return ws.outputs[0];
}

Batch sequence(int64_t f, int64_t h, int64_t w) {
  Batch b;
  b.allocate(*warp_pool(), DType::kUInt8, {{f, h, w, 3}}, "FHWC");
  uint8_t* d = b.data<uint8_t>(0);
  for (int64_t k = 0; k < f * h * w * 3; ++k) d[k] = static_cast<uint8_t>((k * 29 + k / 5) & 255);
  return b;
}

Batch frame_of(const Batch& seq, int64_t frame) {
  const Shape& s = seq.shape(0);
  Batch b;
  b.allocate(*warp_pool(), seq.dtype(), {{s[1], s[2], s[3]}}, "HWC");
  size_t bytes = b.sample_bytes(0);
  std::memcpy(b.data<uint8_t>(0), seq.data<uint8_t>(0) + frame * bytes, bytes);
  return b;
}

void expect_same_per_frame(const std::string& name, const std::map<std::string, ArgValue>& args) {
  Batch seq = sequence(3, 17, 23);
  Batch out = run_warp_op(name, args, seq);
  EXPECT_EQ(out.layout(), "FHWC");
  ASSERT_EQ(out.shape(0).size(), 4u);
  EXPECT_EQ(out.shape(0)[0], 3);
  for (int64_t f = 0; f < 3; ++f) {
    Batch ref = run_warp_op(name, args, frame_of(seq, f));
    EXPECT_EQ(ref.layout(), "HWC");
    EXPECT_EQ(Shape(out.shape(0).begin() + 1, out.shape(0).end()), ref.shape(0)) << name;
    size_t bytes = ref.sample_bytes(0);
    ASSERT_EQ(out.sample_bytes(0), 3 * bytes);
    EXPECT_EQ(0, std::memcmp(ref.data<uint8_t>(0), out.data<uint8_t>(0) + f * bytes, bytes))
        << name << " frame " << f;
  }
}

TEST(WarpOps, SequencesRotateEveryFrameAlike) {
  expect_same_per_frame("rotate", {{"angle", 33.0}, {"fill_value", 5.0}});
  expect_same_per_frame("rotate", {{"angle", -12.0}, {"keep_size", true}});
}

TEST(WarpOps, SequencesWarpAffineEveryFrameAlike) {
  expect_same_per_frame("warp_affine", {{"matrix", std::vector<double>{0.9, 0.1, 2, -0.2, 1.1, 1}},
                                        {"size", std::vector<double>{11, 13}}});
}

TEST(WarpOps, SequencesBlurEveryFrameAlike) {
  expect_same_per_frame("gaussian_blur", {{"sigma", std::vector<double>{1.3}}});
}

TEST(WarpOps, SequencesDistortEveryFrameAlike) {
  expect_same_per_frame("water", {{"interp_type", int64_t{1}}});
  expect_same_per_frame("sphere", {});
  expect_same_per_frame("jpeg_compression_distortion", {{"quality", int64_t{20}}});
}

}  // namespace
}  // namespace stoker
