#ifndef MALLOC_COUNTER_H
#define MALLOC_COUNTER_H

#include <stdint.h>

/// Heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) made by every thread of
/// this process since it started. Counting works on Linux with glibc, where this target replaces those functions
/// for the whole process; elsewhere `malloc_counter_is_active()` is 0 and the count stays 0.
int64_t malloc_counter_allocations(void);

/// Whether allocations are being counted (Linux with glibc).
int malloc_counter_is_active(void);

/// Writes the call stack of every allocation to standard error while `on` is non-zero (Linux with glibc), to find
/// where an operation's allocations come from.
void malloc_counter_trace(int on);

#endif
