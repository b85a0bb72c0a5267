/* stoker_run: runs a serialized pipeline through the C API and prints what came out.
 *
 *   stoker_run PIPELINE [-i NAME=FILE]... [-n ITERATIONS] [-w WARMUP] [-t THREADS] [-d DEVICE]
 *              [-p PLUGIN]... [-q]
 *
 * Each -p loads a plugin library of custom operators first. Each -i gives the external source NAME one more file, whose bytes are one sample (a 1-D uint8
 * tensor: an encoded image, an audio file...). Every iteration feeds each input a whole batch,
 * taking its files in turn (cycling). For each iteration and output it prints one JSON line:
 * the element type, layout, memory, the samples' shapes and an FNV-1a 64-bit hash of each
 * sample's bytes (host outputs). Last, a JSON line with the latency of each run (p50, p99, in
 * milliseconds, from the feed until the outputs are ready, GPU ones included) and the samples
 * per second, over the ITERATIONS after WARMUP untimed ones (default 0). -q prints only that
 * last line.
 * Exit status: 0, or 1 with stoker's message on stderr, or 2 for a bad command line. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stoker/c_api.h"

typedef struct {
  char* name;
  char** files;
  int num_files;
  unsigned char** data;
  int64_t* sizes;
} input_t;

static int usage(void) {
  fprintf(stderr, "usage: stoker_run PIPELINE [-i NAME=FILE]... [-n ITERATIONS] [-w WARMUP] "
                  "[-t THREADS] [-d DEVICE] [-p PLUGIN]... [-q]\n");
  return 2;
}

static int read_file(const char* path, unsigned char** data, int64_t* size) {
  FILE* f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "stoker_run: cannot open '%s'\n", path);
    return 0;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  *data = (unsigned char*)malloc(n > 0 ? (size_t)n : 1);
  *size = n;
  if (n > 0 && fread(*data, 1, (size_t)n, f) != (size_t)n) {
    fprintf(stderr, "stoker_run: cannot read '%s'\n", path);
    fclose(f);
    return 0;
  }
  fclose(f);
  return 1;
}

static const char* dtype_name(DLDataType t) {
  static char buf[32];
  const char* kind = t.code == kDLFloat ? "float" : t.code == kDLInt ? "int" : "uint";
  snprintf(buf, sizeof buf, "%s%d", kind, (int)t.bits);
  return buf;
}

static uint64_t fnv1a(const unsigned char* p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ULL;
  }
  return h;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static int print_output(stoker_outputs_t out, int it, int o) {
  int n = stoker_outputs_num_samples(out, o);
  int gpu = stoker_outputs_on_gpu(out, o);
  printf("{\"iteration\": %d, \"output\": %d, \"layout\": \"%s\", \"gpu\": %s, ", it, o,
         stoker_outputs_layout(out, o), gpu ? "true" : "false");
  char dtype[32] = "";
  printf("\"shapes\": [");
  for (int s = 0; s < n; ++s) {
    DLManagedTensor* t;
    if (stoker_outputs_sample(out, o, s, NULL, &t) != STOKER_OK) {
      fprintf(stderr, "stoker_run: %s\n", stoker_last_error());
      return 0;
    }
    snprintf(dtype, sizeof dtype, "%s", dtype_name(t->dl_tensor.dtype));
    printf("%s[", s ? ", " : "");
    for (int d = 0; d < t->dl_tensor.ndim; ++d)
      printf("%s%lld", d ? ", " : "", (long long)t->dl_tensor.shape[d]);
    printf("]");
    t->deleter(t);
  }
  printf("], \"dtype\": \"%s\", \"fnv1a\": [", dtype);
  for (int s = 0; s < n && !gpu; ++s) {
    DLManagedTensor* t;
    if (stoker_outputs_sample(out, o, s, NULL, &t) != STOKER_OK) return 0;
    size_t bytes = t->dl_tensor.dtype.bits / 8;
    for (int d = 0; d < t->dl_tensor.ndim; ++d) bytes *= (size_t)t->dl_tensor.shape[d];
    printf("%s\"%016llx\"", s ? ", " : "",
           (unsigned long long)fnv1a((const unsigned char*)t->dl_tensor.data, bytes));
    t->deleter(t);
  }
  printf("]}\n");
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return usage();
  const char* path = argv[1];
  int iterations = 1, warmup = 0, quiet = 0;
  stoker_pipeline_options_t opt;
  memset(&opt, 0, sizeof opt);
  opt.device_id = -1;
  input_t inputs[16];
  int num_inputs = 0;
  for (int a = 2; a < argc; ++a) {
    if (!strcmp(argv[a], "-q")) {
      quiet = 1;
    } else if (a + 1 < argc && !strcmp(argv[a], "-n")) {
      iterations = atoi(argv[++a]);
    } else if (a + 1 < argc && !strcmp(argv[a], "-p")) {
      if (stoker_load_plugin(argv[++a]) != STOKER_OK) {
        fprintf(stderr, "stoker_run: %s\n", stoker_last_error());
        return 1;
      }
    } else if (a + 1 < argc && !strcmp(argv[a], "-w")) {
      warmup = atoi(argv[++a]);
    } else if (a + 1 < argc && !strcmp(argv[a], "-t")) {
      opt.num_threads = atoi(argv[++a]);
    } else if (a + 1 < argc && !strcmp(argv[a], "-d")) {
      opt.device_id = atoi(argv[++a]);
    } else if (a + 1 < argc && !strcmp(argv[a], "-i")) {
      char* spec = argv[++a];
      char* eq = strchr(spec, '=');
      if (!eq) return usage();
      *eq = '\0';
      input_t* in = NULL;
      for (int k = 0; k < num_inputs; ++k)
        if (!strcmp(inputs[k].name, spec)) in = &inputs[k];
      if (!in) {
        if (num_inputs == 16) return usage();
        in = &inputs[num_inputs++];
        memset(in, 0, sizeof *in);
        in->name = spec;
      }
      in->files = (char**)realloc(in->files, sizeof(char*) * (in->num_files + 1));
      in->files[in->num_files++] = eq + 1;
    } else {
      return usage();
    }
  }
  if (iterations < 1 || warmup < 0) return usage();
  for (int k = 0; k < num_inputs; ++k) {
    input_t* in = &inputs[k];
    in->data = (unsigned char**)calloc(in->num_files, sizeof(unsigned char*));
    in->sizes = (int64_t*)calloc(in->num_files, sizeof(int64_t));
    for (int f = 0; f < in->num_files; ++f)
      if (!read_file(in->files[f], &in->data[f], &in->sizes[f])) return 1;
  }

  stoker_pipeline_t p;
  if (stoker_pipeline_create_from_file(path, &opt, &p) != STOKER_OK) {
    fprintf(stderr, "stoker_run: %s\n", stoker_last_error());
    return 1;
  }
  const int batch = stoker_pipeline_batch_size(p);
  DLTensor* samples = (DLTensor*)calloc((size_t)batch, sizeof(DLTensor));
  double* latency = (double*)calloc((size_t)iterations, sizeof(double));
  int64_t delivered = 0;
  int status = 0;
  double start = now_ms();
  for (int it = 0; it < warmup + iterations && !status; ++it) {
    if (it == warmup) start = now_ms();
    const double t0 = now_ms();
    for (int k = 0; k < num_inputs && !status; ++k) {
      input_t* in = &inputs[k];
      for (int s = 0; s < batch; ++s) {
        int f = (it * batch + s) % in->num_files;
        DLTensor* t = &samples[s];
        memset(t, 0, sizeof *t);
        t->data = in->data[f];
        t->device.device_type = kDLCPU;
        t->ndim = 1;
        t->shape = &in->sizes[f];
        t->dtype.code = kDLUInt;
        t->dtype.bits = 8;
        t->dtype.lanes = 1;
      }
      if (stoker_pipeline_feed(p, in->name, samples, batch) != STOKER_OK) status = 1;
    }
    stoker_outputs_t out = NULL;
    if (!status && stoker_pipeline_run(p, &out) != STOKER_OK) status = 1;
    if (!status && stoker_outputs_wait(out) != STOKER_OK) status = 1;
    if (status) {
      fprintf(stderr, "stoker_run: %s\n", stoker_last_error());
      break;
    }
    if (it >= warmup) {
      latency[it - warmup] = now_ms() - t0;
      delivered += stoker_outputs_num_samples(out, 0);
    }
    for (int o = 0; o < stoker_outputs_count(out) && !quiet; ++o)
      if (!print_output(out, it, o)) status = 1;
    stoker_outputs_release(out);
  }
  const double total = now_ms() - start;
  if (!status) {
    qsort(latency, (size_t)iterations, sizeof(double), cmp_double);
    printf("{\"iterations\": %d, \"batch_size\": %d, \"p50_ms\": %.3f, \"p99_ms\": %.3f, "
           "\"samples_per_s\": %.1f}\n", iterations, batch, latency[iterations / 2],
           latency[(int)((iterations - 1) * 0.99)], delivered / (total / 1e3));
  }
  stoker_pipeline_destroy(p);
  free(samples);
  free(latency);
  for (int k = 0; k < num_inputs; ++k) {
    for (int f = 0; f < inputs[k].num_files; ++f) free(inputs[k].data[f]);
    free(inputs[k].data);
    free(inputs[k].sizes);
    free(inputs[k].files);
  }
  return status;
}
