public import Foundation

#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

// The session a cancellable transfer reports live progress on, and the serial queue its delegate needs.
extension URLSession {
    /// Makes a session whose cancellable transfers report progress as bytes arrive and stream downloads
    /// straight to disk.
    ///
    /// ```swift
    /// let session = URLSession.withProgressReporting()
    /// session.cancellableData(from: url) { print($0.fractionCompleted ?? 0) }
    /// ```
    ///
    /// Any session works with the `cancellable…` methods, and one without a delegate (`URLSession.shared`,
    /// `URLSession(configuration:)`) reports live progress too: on Linux, and on Apple platforms before macOS 12 and
    /// iOS 15, its transfers run on a session like this one that the library makes with its configuration. Make one
    /// yourself to choose the delegate queue. Its delegate belongs to the library: do not use the session with
    /// delegate-based APIs of your own (a session with a delegate of your own keeps it: its transfers use
    /// completion handlers, and report progress once, at the end). Like any session with a delegate, it lives until
    /// it is invalidated: call `finishTasksAndInvalidate()` when you no longer need it (running transfers finish
    /// first).
    ///
    /// On Linux the session has no URL cache, whatever `configuration` says: swift-corelibs-foundation ends the
    /// process when a transfer that is looking its response up in a cache is cancelled.
    ///
    /// - Parameters:
    ///   - configuration: the session's configuration.
    ///   - delegateQueue: where the session's delegate calls — and so the `progress` closures — run; `nil` for a
    ///     serial queue the session makes. A transfer's callbacks must come one at a time, in order (bytes are
    ///     written to the file in the order they arrive), so a queue that runs several operations at once is not
    ///     used as it is: the session gets a serial queue that runs its operations on `delegateQueue`'s
    ///     `underlyingQueue` if it has one (a private thread otherwise). `OperationQueue.main` is serial, and used
    ///     as it is.
    public static func withProgressReporting(
        configuration: URLSessionConfiguration = .default,
        delegateQueue: OperationQueue? = nil
    ) -> URLSession {
        #if canImport(FoundationNetworking)
        // swift-corelibs-foundation: a data task that looks its response up in a URL cache can be cancelled into a
        // crash (see `taskIntoMemory`), and every transfer of this session is a data task.
        let configuration = configuration.copy() as! URLSessionConfiguration
        configuration.urlCache = nil
        #endif
        return URLSession(
            configuration: configuration,
            delegate: TransferRouter(),
            delegateQueue: serial(delegateQueue)
        )
    }

    /// `queue` if it runs one operation at a time (or is `nil`); otherwise a serial queue that runs its operations
    /// on `queue`'s dispatch queue, if it has one. (URLSession's documentation asks for a serial delegate queue; on a
    /// concurrent one, two pieces of one body could be written to the file at once, or out of order.)
    static func serial(_ queue: OperationQueue?) -> OperationQueue? {
        guard let queue, queue.maxConcurrentOperationCount != 1 else { return queue }
        return SerialDelegateQueue(runningOn: queue)
    }
}
