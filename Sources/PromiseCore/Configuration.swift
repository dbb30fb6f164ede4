public import Dispatch

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#endif

/// How handlers treat errors that represent cancellation.
///
/// ```swift
/// download.catch(policy: .allErrors) { error in
///     if error.isCancelled { showStopped() } else { show(error) }
/// }
/// ```
public enum CatchPolicy: Sendable {
    /// Handlers see every error, cancellation included.
    case allErrors
    /// Handlers do not see errors whose `isCancelled` is true (the default).
    case allErrorsExceptCancellation
}

/// Something PromiseCore reports through ``PMKConfiguration/logHandler``: PromiseKit's four events, constructed,
/// matched and printed as in PromiseKit.
///
/// ```swift
/// conf.logHandler = { event in
///     if case .pendingPromiseDeallocated = event, let site = PromiseDiagnostics.loggedCreationSite {
///         logger.warning("a promise made at \(site) can never resolve")
///     } else {
///         logger.warning("\(event)")
///     }
/// }
/// ```
public enum LogEvent: Sendable {
    /// `wait()` was called on the main thread, which may deadlock.
    case waitOnMainThread
    /// A promise made with a `Resolver` was deallocated while pending, its resolver with it: it can never resolve.
    ///
    /// In debug builds, ``PromiseDiagnostics/loggedCreationSite`` tells the log handler where the promise was
    /// made.
    case pendingPromiseDeallocated
    /// A guarantee was deallocated while pending: its resolve closure was never called.
    ///
    /// In debug builds, ``PromiseDiagnostics/loggedCreationSite`` tells the log handler where the guarantee
    /// was made.
    case pendingGuaranteeDeallocated
    /// `cauterize()` swallowed this error.
    case cauterized(Error)
}

/// PromiseCore's global settings: default queues, default catch policy and the log handler.
///
/// Read and change them through ``conf``, exactly as with PromiseKit:
///
/// ```swift
/// // A Linux server has no main run loop: run handlers on a global queue instead.
/// conf.Q = (map: .global(), return: .global())
/// conf.logHandler = { event in logger.warning("\(event)") }
/// ```
public struct PMKConfiguration: Sendable {
    /// The default queues: `map` for `then`, `map`, `recover`…, `return` for `done`, `catch`, `ensure`….
    /// `nil` runs handlers inline, on the thread that resolved the promise. Both default to the main queue.
    public var Q: (map: DispatchQueue?, return: DispatchQueue?) = (map: .main, return: .main)

    /// The policy of `catch` and `recover` when the call does not give one.
    public var catchPolicy = CatchPolicy.allErrorsExceptCancellation

    /// Receives ``LogEvent``s. The default prints them. It may be called from any thread.
    public var logHandler: @Sendable (LogEvent) -> Void = PMKConfiguration.printLogEvent

    /// The defaults: main queues, ``CatchPolicy/allErrorsExceptCancellation``, and a log handler that prints.
    public init() {}

    private static func printLogEvent(_ event: LogEvent) {
        let createdAt = PromiseDiagnostics.loggedCreationSite.map { " (created at \($0))" } ?? ""
        switch event {
        case .waitOnMainThread:
            printWarning(
                "PromiseCore: warning: `wait()` called on the main thread: it never returns if the promise needs the "
                    + "main queue, where handlers written on the main actor without `on:` run (as in a Swift 6 "
                    + "command-line tool's main.swift, whatever `conf.Q` says). Use `try await promise.async()` "
                    + "instead, or call `wait()` off the main thread."
            )
        case .pendingPromiseDeallocated:
            printWarning("PromiseCore: warning: pending promise deallocated\(createdAt)")
        case .pendingGuaranteeDeallocated:
            printWarning("PromiseCore: warning: pending guarantee deallocated\(createdAt)")
        case .cauterized(let error):
            printWarning("PromiseCore: cauterized error: \(error)")
        }
    }

    /// Writes `message` to the standard error, which is not buffered: a warning printed just before the process
    /// blocks (a `wait()` that never returns) is seen, where standard output sent to a pipe or a file would keep it
    /// in its buffer.
    private static func printWarning(_ message: String) {
        var message = message + "\n"
        message.withUTF8 { bytes in
            _ = write(2, bytes.baseAddress, bytes.count)  // file descriptor 2: the standard error
        }
    }
}

/// The library's configuration. Thread-safe: each read or write of `conf` (or of one of its properties)
/// is atomic.
///
/// ```swift
/// conf.Q.map = .global()
/// conf.catchPolicy = .allErrors
/// ```
///
/// > Note: a compound update such as `conf.Q.map = x` reads the whole configuration and writes it back;
/// > two threads doing that at once may lose one update. Configure once, at start-up.
public var conf: PMKConfiguration {
    get { configuration.withLock { $0 } }
    set { configuration.withLock { $0 = newValue } }
}

private let configuration = Locked(PMKConfiguration())
