// STOKER_HD marks a function that both the host compiler and nvcc's device pass compile (the
// pixel arithmetic a CPU kernel and its GPU twin share, so that they compute the same).
#pragma once

#if defined(__CUDACC__)
#define STOKER_HD __host__ __device__
#else
#define STOKER_HD
#endif
