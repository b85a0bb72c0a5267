// experimental.inputs.video: the schema (arguments, documentation, the checks of constants) of
// DALI's streaming video input. The Python layer builds it from two operators that already
// exist (python/stoker/_video.py): an external source that cuts each video fed with
// Pipeline.feed_input into batches of sequences, and decoders.video, which decodes each
// sequence from the fed bytes (shared, not copied). Run without that layer (a serialized
// pipeline, the C API), it says so.
#include "pipeline/operator.h"

namespace stoker {

STOKER_REGISTER_OP_NAMED(experimental_inputs_video, "experimental.inputs.video") {
  schema.doc("Streams a long video fed with Pipeline.feed_input (one encoded file per call, "
             "queued) as consecutive sequences of sequence_length RGB frames (FHWC), "
             "batch_size sequences per iteration; the last batch of each video may be smaller, "
             "and its last sequence shorter (last_sequence_policy='partial') or padded with "
             "zeros ('pad'). Frames are decoded on the CPU through FFmpeg; device='mixed' "
             "copies them to the GPU.")
      .inputs(0, 0).outputs(1)
      .arg({.name = "sequence_length", .type = ArgType::kInt, .doc = "Frames in each sequence.",
            .min = 1})
      .arg({.name = "last_sequence_policy", .type = ArgType::kString,
            .default_value = std::string("partial"),
            .doc = "The last sequence of a video with fewer than sequence_length frames left: "
                   "'partial' (shorter) or 'pad' (filled with zeros).",
            .choices = {"partial", "pad"}})
      .arg({.name = "blocking", .type = ArgType::kBool, .default_value = false,
            .doc = "True: run() waits for feed_input when no video is queued; False: it raises."})
      .arg({.name = "no_copy", .type = ArgType::kBool, .default_value = false,
            .doc = "True: the fed array is used where it is (keep it alive and unchanged until "
                   "its last sequence is out); False: feed_input copies it."})
      .arg({.name = "affine", .type = ArgType::kBool, .default_value = true,
            .doc = "Accepted for DALI compatibility (thread pinning of DALI's mixed backend)."})
      .backend(Backend::kCPU, [](const OpSpec& s) -> std::unique_ptr<Operator> {
        throw Error(ErrorKind::kUnsupported,
                    s.display_name() + ": fed by Pipeline.feed_input from Python; it cannot run "
                                       "from a serialized pipeline or the C API");
      });
}

}  // namespace stoker
