/* Image classification preprocessing in C: a pipeline written in Python and serialized
 * (examples/c/make_pipeline.py writes one), fed JPEG files by name, its output taken as one
 * DLPack tensor without a copy. No Python at run time.
 *
 *   python examples/c/make_pipeline.py classify.stoker     # once, where stoker's Python is
 *   ./classify classify.stoker a.jpg b.jpg ...              # up to the pipeline's batch size
 *
 * Prints the batch's shape and each image's mean per channel. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stoker/c_api.h"

static unsigned char* read_file(const char* path, int64_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *size = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* data = malloc(*size > 0 ? (size_t)*size : 1);
  if (data && fread(data, 1, (size_t)*size, f) != (size_t)*size) {
    free(data);
    data = NULL;
  }
  fclose(f);
  return data;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s PIPELINE IMAGE...\n", argv[0]);
    return 2;
  }
  stoker_pipeline_t pipe;
  if (stoker_pipeline_create_from_file(argv[1], NULL, &pipe) != STOKER_OK) {
    fprintf(stderr, "%s\n", stoker_last_error());
    return 1;
  }
  /* One sample per file: its encoded bytes, a 1-D uint8 tensor. */
  int n = argc - 2;
  DLTensor* samples = calloc((size_t)n, sizeof(DLTensor));
  int64_t* sizes = calloc((size_t)n, sizeof(int64_t));
  unsigned char** files = calloc((size_t)n, sizeof(unsigned char*));
  for (int i = 0; i < n; ++i) {
    files[i] = read_file(argv[i + 2], &sizes[i]);
    if (!files[i]) {
      fprintf(stderr, "cannot read %s\n", argv[i + 2]);
      return 1;
    }
    samples[i].data = files[i];
    samples[i].device.device_type = kDLCPU;
    samples[i].ndim = 1;
    samples[i].shape = &sizes[i];
    samples[i].dtype.code = kDLUInt;
    samples[i].dtype.bits = 8;
    samples[i].dtype.lanes = 1;
  }
  stoker_outputs_t out;
  DLManagedTensor* images;
  if (stoker_pipeline_feed(pipe, stoker_pipeline_input_name(pipe, 0), samples, n) != STOKER_OK ||
      stoker_pipeline_run(pipe, &out) != STOKER_OK) {
    fprintf(stderr, "%s\n", stoker_last_error());
    return 1;
  }
  if (stoker_outputs_tensor(out, 0, NULL, &images) != STOKER_OK) {
    fprintf(stderr, "%s\n", stoker_last_error());
    return 1;
  }
  char layout[16];
  snprintf(layout, sizeof layout, "%s", stoker_outputs_layout(out, 0));
  stoker_outputs_release(out); /* the tensor keeps its memory alive on its own */

  const DLTensor* t = &images->dl_tensor;
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->ndim != 4) {
    fprintf(stderr, "expected a batch of float32 CHW images\n");
    return 1;
  }
  printf("batch (%lld, %lld, %lld, %lld) float32, sample layout %s\n", (long long)t->shape[0],
         (long long)t->shape[1], (long long)t->shape[2], (long long)t->shape[3], layout);
  const float* px = (const float*)t->data;
  const int64_t c = t->shape[1], hw = t->shape[2] * t->shape[3];
  for (int64_t i = 0; i < t->shape[0]; ++i) {
    printf("%s:", argv[i + 2]);
    for (int64_t k = 0; k < c; ++k) {
      double sum = 0;
      for (int64_t j = 0; j < hw; ++j) sum += px[(i * c + k) * hw + j];
      printf(" %.6f", sum / (double)hw);
    }
    printf("\n");
  }
  images->deleter(images);
  stoker_pipeline_destroy(pipe);
  for (int i = 0; i < n; ++i) free(files[i]);
  free(files);
  free(sizes);
  free(samples);
  return 0;
}
