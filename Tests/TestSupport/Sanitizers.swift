#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Whether this process runs under ThreadSanitizer (`swift test --sanitize=thread`), which slows every thread
/// switch and memory access by 5–15×.
///
/// Tests that bound a latency the library controls (a cancelled transfer's connection closed within 250 ms, say)
/// hold the bound in the plain run and allow for the sanitizer here: under it they check for data races, not for
/// time.
///
/// ```swift
/// #expect(sinceDecision < (underThreadSanitizer ? 1 : 0.25))
/// ```
package let underThreadSanitizer: Bool = {
    #if canImport(Darwin)
    let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT, a macro Swift does not import
    #else
    let everywhere: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT
    #endif
    return dlsym(everywhere, "__tsan_init") != nil
}()
