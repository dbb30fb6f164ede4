import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a child process ended, and what it cost.
struct Exit {
    /// The exit code, or 128 + the signal that ended it.
    let status: Int32
    /// From its start to its exit, as the harness saw them.
    let seconds: Double
    /// User + system CPU time the kernel charged to the child (and any children it waited for).
    let cpuSeconds: Double
}

/// A child started with `posix_spawn` rather than Foundation's `Process`: `wait4` then gives the resource usage of
/// exactly that child, which is how each client's CPU is told apart from the server's and the harness's. (`Process`
/// reaps its children itself, and `getrusage(RUSAGE_CHILDREN)` would add every child ever waited for.)
struct Child {
    let pid: pid_t
    let started: ContinuousClock.Instant

    /// Starts `arguments[0]` (an absolute path) with `arguments`, its standard output to `output` if given.
    init(_ arguments: [String], output: String? = nil) throws {
        #if os(Linux)
        var actions = posix_spawn_file_actions_t()
        #else
        var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let output {
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        started = .now
        let error = posix_spawn(&pid, arguments[0], &actions, nil, argv, environ)
        guard error == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: error) ?? .EIO, userInfo: ["command": arguments[0]])
        }
        self.pid = pid
    }

    /// Waits for the child to exit.
    func wait() -> Exit {
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        let cpu = [usage.ru_utime, usage.ru_stime].map { Double($0.tv_sec) + Double($0.tv_usec) / 1e6 }
        // WIFEXITED / WEXITSTATUS are macros Swift does not import: the low 7 bits are the signal, 0 if it exited.
        let signal = status & 0x7f
        let code = signal == 0 ? (status >> 8) & 0xff : 128 + signal
        return Exit(status: code, seconds: seconds, cpuSeconds: cpu[0] + cpu[1])
    }

    /// Asks the child to stop (SIGTERM) and waits for it.
    func stop() {
        kill(pid, SIGTERM)
        _ = wait()
    }
}

/// Runs `arguments` to its end; its standard output, if `output` is given, goes to that file.
@discardableResult
func run(_ arguments: [String], output: String? = nil) throws -> Exit {
    try Child(arguments, output: output).wait()
}

/// The first of `candidates` that is an executable file.
func executable(_ candidates: [String]) -> String? {
    candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// Whether something accepts TCP connections on `host`:`port`.
func accepts(host: String, port: UInt16) -> Bool {
    #if os(Linux)
    let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let socketFD = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard socketFD >= 0 else { return false }
    defer { close(socketFD) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    inet_pton(AF_INET, host, &address.sin_addr)
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(socketFD, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// A TCP port nobody listens on now, chosen by the kernel. (Another program could take it before nginx binds it;
/// nginx would then fail to start, and say so.)
func freePort() -> UInt16? {
    #if os(Linux)
    let socketFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let socketFD = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard socketFD >= 0 else { return nil }
    defer { close(socketFD) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(socketFD, $0, length) == 0 && getsockname(socketFD, $0, &length) == 0
        }
    }
    return bound ? UInt16(bigEndian: address.sin_port) : nil
}
