import Dispatch
import Foundation

/// Runs the current thread's run loop until `promise` resolves, then returns its value or throws its error.
///
/// For command-line tools and scripts whose handlers run on the main queue: the main run loop keeps
/// serving the main queue while it waits.
///
/// ```swift
/// let user = try hang(fetchUser())
/// ```
///
/// Off the main thread there is no main queue to serve, so `hang` simply blocks like `wait()`.
public func hang<T>(_ promise: Promise<T>) throws -> T {
    if Thread.isMainThread {
        // Wake the run loop as soon as the promise resolves; poll as a backstop.
        promise.pipe { _ in DispatchQueue.main.async {} }
        let runLoop = RunLoop.current
        while promise.isPending {
            _ = runLoop.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
        }
    }
    switch promise.waitForResultQuietly() {
    case .fulfilled(let value): return value
    case .rejected(let error): throw error
    }
}

extension Thenable {
    /// `wait()` without the main-thread warning, for `hang`, which only gets here once resolved on main.
    fileprivate func waitForResultQuietly() -> Result<T> {
        if let result {
            return result
        }
        let semaphore = DispatchSemaphore(value: 0)
        pipe { _ in semaphore.signal() }
        semaphore.wait()
        return result.unsafelyUnwrapped
    }
}
