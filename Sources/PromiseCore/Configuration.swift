public import Dispatch

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

/// Something PromiseCore reports through ``PMKConfiguration/logHandler``.
public enum LogEvent: Sendable {
    /// `wait()` was called on the main thread, which may deadlock.
    case waitOnMainThread
    /// A promise was left pending when its last `Resolver` was deallocated: it can never resolve.
    ///
    /// `createdAt` is where the promise was made, in debug builds (see ``PromiseDiagnostics``); `nil` in
    /// release builds. `case .pendingPromiseDeallocated:` matches either way.
    case pendingPromiseDeallocated(createdAt: PromiseCreationSite?)
    /// A guarantee was deallocated while pending: its resolve closure was never called.
    ///
    /// `createdAt` is where the guarantee was made, in debug builds; `nil` in release builds.
    case pendingGuaranteeDeallocated(createdAt: PromiseCreationSite?)
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
        switch event {
        case .waitOnMainThread:
            print("PromiseCore: warning: `wait()` called on the main thread!")
        case .pendingPromiseDeallocated(let site):
            print("PromiseCore: warning: pending promise deallocated\(site.map { " (created at \($0))" } ?? "")")
        case .pendingGuaranteeDeallocated(let site):
            print("PromiseCore: warning: pending guarantee deallocated\(site.map { " (created at \($0))" } ?? "")")
        case .cauterized(let error):
            print("PromiseCore: cauterized error: \(error)")
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
