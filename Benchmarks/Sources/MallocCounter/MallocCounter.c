// Counts heap allocations the way SwiftNIO's allocation-counter tests do, without a preloaded library: this target
// is linked into the executable, whose definitions of the allocation functions take precedence over libc's for
// every shared library of the process (the Swift runtime's swift_slowAlloc included). Each forwards to glibc's own
// implementation (__libc_malloc and friends); `free` is not replaced — glibc frees what __libc_* allocated.

#define _GNU_SOURCE  // RTLD_NEXT
#include "MallocCounter.h"

#if defined(__linux__) && defined(__GLIBC__)
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <execinfo.h>
#include <stddef.h>
#include <stdatomic.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);

static _Atomic int64_t allocations = 0;

static _Atomic int tracing = 0;
static _Thread_local int inTrace = 0;

// With tracing on, each allocation's call stack is written to standard error (symbols mangled: pipe through
// `swift demangle`). backtrace() may allocate the first time: allocations made while tracing are not traced.
static inline void count(void) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    if (atomic_load_explicit(&tracing, memory_order_relaxed) && !inTrace) {
        inTrace = 1;
        void *frames[12];
        int depth = backtrace(frames, 12);
        write(2, "-- allocation\n", 14);
        backtrace_symbols_fd(frames + 1, depth - 1, 2);
        inTrace = 0;
    }
}

void *malloc(size_t size) {
    count();
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    count();
    return __libc_calloc(count_, size);
}

// A realloc that moves or grows a block is an allocation; realloc(NULL, n) is a malloc.
void *realloc(void *pointer, size_t size) {
    count();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    count();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

// With tracing on, each Swift object allocation also names its class (a closure context has no class name).
typedef struct { const char *data; size_t length; } TypeNamePair;
extern TypeNamePair swift_getTypeName(const void *type, bool qualified);
typedef void *(*AllocObject)(const void *metadata, size_t size, size_t alignMask);

void *swift_allocObject(const void *metadata, size_t size, size_t alignMask) {
    static AllocObject real = NULL;
    if (real == NULL) real = (AllocObject)dlsym(RTLD_NEXT, "swift_allocObject");
    if (atomic_load_explicit(&tracing, memory_order_relaxed) && !inTrace) {
        inTrace = 1;
        TypeNamePair name = swift_getTypeName(metadata, true);
        char line[512];
        int length = snprintf(line, sizeof line, "-- object %.*s, %zu bytes\n", (int)name.length, name.data, size);
        if (length > 0) write(2, line, (size_t)length < sizeof line ? (size_t)length : sizeof line - 1);
        inTrace = 0;
    }
    return real(metadata, size, alignMask);
}

int64_t malloc_counter_allocations(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }
int malloc_counter_is_active(void) { return 1; }
void malloc_counter_trace(int on) { atomic_store_explicit(&tracing, on, memory_order_relaxed); }
#else
void malloc_counter_trace(int on) { (void)on; }
int64_t malloc_counter_allocations(void) { return 0; }
int malloc_counter_is_active(void) { return 0; }
#endif
