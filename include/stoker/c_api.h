/* stoker's C API: run a serialized pipeline without Python.
 *
 * A pipeline serialized by stoker's Python API (pipe.serialize(filename=...)) is loaded here,
 * fed through its named external sources, run, and its outputs are taken as DLPack tensors.
 * Nothing here needs CUDA's or Python's headers; device memory is passed as DLPack tensors
 * (kDLCUDA) and streams as plain pointers (a cudaStream_t, or NULL for the legacy default one).
 *
 *   stoker_pipeline_t p;
 *   if (stoker_pipeline_create_from_file("model.stoker", NULL, &p) != STOKER_OK) {
 *     fprintf(stderr, "%s\n", stoker_last_error());
 *     return 1;
 *   }
 *   stoker_pipeline_feed(p, "jpegs", samples, n);   // one DLTensor per sample, copied
 *   stoker_outputs_t out;
 *   stoker_pipeline_run(p, &out);
 *   DLManagedTensor* images;
 *   stoker_outputs_tensor(out, 0, NULL, &images);    // (N, H, W, C), no copy
 *   ...
 *   images->deleter(images);                         // any time, before or after:
 *   stoker_outputs_release(out);
 *   stoker_pipeline_destroy(p);
 *
 * Errors: every function that can fail returns a stoker_status_t; the text of the last failure
 * on the calling thread is stoker_last_error() (it names the operator, the argument or the
 * file, and what to do, as the Python API's exceptions do).
 *
 * Threads: one pipeline may be used from several threads: calls on it are serialized, except
 * that stoker_pipeline_feed may be called while another thread waits in stoker_pipeline_run.
 * Different pipelines are independent.
 */
#ifndef STOKER_C_API_H_
#define STOKER_C_API_H_

#include <dlpack/dlpack.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This header's version: stoker_c_api_version() returns the library's; they must be equal. */
#define STOKER_C_API_VERSION 1

#if defined(__GNUC__)
#define STOKER_API __attribute__((visibility("default")))
#else
#define STOKER_API
#endif

typedef enum stoker_status {
  STOKER_OK = 0,
  STOKER_ERROR_INVALID_ARGUMENT = 1, /* a bad argument, pipeline file or input */
  STOKER_ERROR_TYPE = 2,             /* data of the wrong element type */
  STOKER_ERROR_NOT_FOUND = 3,        /* a missing file */
  STOKER_ERROR_DECODE = 4,           /* corrupt data (an image, a record) */
  STOKER_ERROR_IO = 5,               /* reading failed */
  STOKER_ERROR_OUT_OF_MEMORY = 6,
  STOKER_ERROR_UNSUPPORTED = 7,      /* not in this build (CUDA, a codec) */
  STOKER_ERROR_INTERNAL = 8          /* a bug in stoker: please report it with the message */
} stoker_status_t;

typedef struct stoker_pipeline* stoker_pipeline_t;
typedef struct stoker_outputs* stoker_outputs_t;

/* Settings that replace the serialized pipeline's; zero-initialize, then set what to change. */
typedef struct stoker_pipeline_options {
  int num_threads;          /* > 0: CPU worker threads; 0: as serialized */
  int device_id;            /* >= 0: this GPU; -1: as serialized */
  int prefetch_queue_depth; /* > 0: batches prepared ahead; 0: as serialized */
} stoker_pipeline_options_t;

STOKER_API int stoker_c_api_version(void);
STOKER_API const char* stoker_version(void);
/* The text of the last error on this thread ("" when the last call succeeded). Valid until the
 * next call into stoker on this thread. */
STOKER_API const char* stoker_last_error(void);

/* Loads a plugin library of custom operators (built with find_package(stoker), target
 * stoker::plugin), before creating the pipelines that use them. Loading it again does nothing. */
STOKER_API stoker_status_t stoker_load_plugin(const char* path);

/* A pipeline from what Pipeline.serialize() returned (`size` bytes at `data`). */
STOKER_API stoker_status_t stoker_pipeline_create(const void* data, size_t size,
                                                  const stoker_pipeline_options_t* options,
                                                  stoker_pipeline_t* pipeline);
STOKER_API stoker_status_t stoker_pipeline_create_from_file(const char* path,
                                                            const stoker_pipeline_options_t* options,
                                                            stoker_pipeline_t* pipeline);
/* Stops the pipeline's threads and frees it; outputs and tensors taken from it stay valid. */
STOKER_API void stoker_pipeline_destroy(stoker_pipeline_t pipeline);

STOKER_API int stoker_pipeline_batch_size(stoker_pipeline_t pipeline);
/* The external sources to feed, by name (valid while the pipeline lives). */
STOKER_API int stoker_pipeline_num_inputs(stoker_pipeline_t pipeline);
STOKER_API const char* stoker_pipeline_input_name(stoker_pipeline_t pipeline, int index);
STOKER_API int stoker_pipeline_num_outputs(stoker_pipeline_t pipeline);

/* Gives the named external source its data for one iteration: `num_samples` tensors (host or
 * CUDA memory, C-contiguous, one element type and number of dimensions), copied before the call
 * returns. Each run() takes one fed batch per input, in the order they were fed. */
STOKER_API stoker_status_t stoker_pipeline_feed(stoker_pipeline_t pipeline, const char* name,
                                                const DLTensor* samples, int num_samples);
/* The same with the samples as one tensor whose first axis is the batch. */
STOKER_API stoker_status_t stoker_pipeline_feed_batch(stoker_pipeline_t pipeline,
                                                      const char* name, const DLTensor* batch);

/* The next batch of every output. Fails (without waiting) when an input has not been fed for
 * it; fails with the iteration's error when a sample could not be processed (the next call goes
 * on with the next iteration). */
STOKER_API stoker_status_t stoker_pipeline_run(stoker_pipeline_t pipeline, stoker_outputs_t* outputs);

STOKER_API int stoker_outputs_count(stoker_outputs_t outputs);
STOKER_API int stoker_outputs_num_samples(stoker_outputs_t outputs, int output);
/* "HWC", "" when the output has none (valid while `outputs` lives). */
STOKER_API const char* stoker_outputs_layout(stoker_outputs_t outputs, int output);
/* 1 when the output lives in GPU memory. */
STOKER_API int stoker_outputs_on_gpu(stoker_outputs_t outputs, int output);
/* Output `output` as one tensor (N, sample shape...) without a copy: its samples must have one
 * shape. GPU outputs: `cuda_stream` (a cudaStream_t; NULL: the legacy default stream) waits
 * until the data is ready; ignored for host outputs. The caller owns the tensor: call its
 * deleter when done (it keeps the memory alive on its own). */
STOKER_API stoker_status_t stoker_outputs_tensor(stoker_outputs_t outputs, int output,
                                                 void* cuda_stream, DLManagedTensor** tensor);
/* One sample of an output, without a copy (any shapes). */
STOKER_API stoker_status_t stoker_outputs_sample(stoker_outputs_t outputs, int output, int sample,
                                                 void* cuda_stream, DLManagedTensor** tensor);
/* Blocks the calling thread until every GPU output is ready (nothing to wait for on the CPU):
 * for callers that read the data on the host side of CUDA, or time the pipeline. */
STOKER_API stoker_status_t stoker_outputs_wait(stoker_outputs_t outputs);
STOKER_API void stoker_outputs_release(stoker_outputs_t outputs);

#ifdef __cplusplus
}
#endif
#endif /* STOKER_C_API_H_ */
