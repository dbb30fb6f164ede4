import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// The write end of the self-pipe. Written once, before the handler is installed, and then only read by the
// signal handler: safe, but Swift cannot see that, hence `nonisolated(unsafe)`.
nonisolated(unsafe) private var interruptPipeWriteEnd: Int32 = -1

/// Calls `onInterrupt` (on a global queue) when the process receives SIGINT (Ctrl-C).
///
/// A signal handler may only do async-signal-safe work, so it writes one byte to a pipe (the self-pipe
/// trick) and a dispatch source reading the other end does the rest. This works on Linux and Apple platforms
/// alike, and also when the shell started the process with SIGINT ignored.
func onInterrupt(_ onInterrupt: @escaping @Sendable () -> Void) -> DispatchSourceRead {
    var ends: [Int32] = [-1, -1]
    precondition(pipe(&ends) == 0, "pipe() failed")
    interruptPipeWriteEnd = ends[1]
    signal(SIGINT) { _ in
        var byte: UInt8 = 1
        _ = write(interruptPipeWriteEnd, &byte, 1)
    }
    let source = DispatchSource.makeReadSource(fileDescriptor: ends[0], queue: .global())
    source.setEventHandler {
        var byte: UInt8 = 0
        _ = read(ends[0], &byte, 1)
        onInterrupt()
    }
    source.resume()
    return source
}

/// Writes a line to standard output at once (unbuffered, so that it interleaves with the progress board).
func say(_ line: String = "") {
    let text = line + "\n"
    _ = text.withCString { write(STDOUT_FILENO, $0, strlen($0)) }
}
