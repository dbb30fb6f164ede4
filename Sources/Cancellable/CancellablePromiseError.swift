public import Foundation
public import PromiseCore

/// The error a ``CancellablePromise`` rejects with when it is cancelled.
///
/// It is a `CancellableError`, so `catch` with the default policy skips it and `error.isCancelled` is true.
///
/// ```swift
/// download.catch(policy: .allErrors) { error in
///     if case CancellablePromiseError.cancelled = error { print("stopped") }
/// }
/// ```
public enum CancellablePromiseError: Error, CancellableError, Sendable {
    /// The promise was cancelled before it resolved.
    case cancelled

    /// Always true: this error only ever means cancellation.
    public var isCancelled: Bool { true }
}

extension CancellablePromiseError: LocalizedError {
    /// "The promise was cancelled".
    public var errorDescription: String? {
        "The promise was cancelled"
    }
}

/// The error ``CancellablePromise/timeout(seconds:)`` rejects with when the deadline passes first.
///
/// It is **not** a cancellation: `catch` with the default policy sees it.
///
/// ```swift
/// download.timeout(seconds: 30).catch { error in
///     if error is TimeoutError { showRetry() }
/// }
/// ```
public struct TimeoutError: Error, Sendable, Equatable {
    /// The interval that passed, in seconds.
    public let seconds: TimeInterval

    /// Makes the error for a timeout of `seconds`.
    public init(seconds: TimeInterval) {
        self.seconds = seconds
    }
}

extension TimeoutError: LocalizedError {
    /// "The operation timed out after N seconds".
    public var errorDescription: String? {
        "The operation timed out after \(seconds) seconds"
    }
}
