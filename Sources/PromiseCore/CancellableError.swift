import Foundation

/// An error that may represent cancellation rather than failure.
///
/// Conform your own cancellation errors to it, and ``CatchPolicy/allErrorsExceptCancellation`` (the default
/// policy of `catch`) skips them.
///
/// ```swift
/// enum DownloadError: CancellableError {
///     case userStopped, badResponse
///     var isCancelled: Bool { self == .userStopped }
/// }
/// ```
public protocol CancellableError: Error {
    /// Whether this error means that the operation was cancelled.
    var isCancelled: Bool { get }
}

extension Error {
    /// Whether this error means that an operation was cancelled rather than that it failed.
    ///
    /// True for ``PMKError/cancelled``, for any ``CancellableError`` that says so, for Swift Concurrency's
    /// `CancellationError`, for `URLError.cancelled` and for `CocoaError.userCancelled`.
    ///
    /// ```swift
    /// promise.catch(policy: .allErrors) { error in
    ///     if error.isCancelled { return }   // the user pressed Stop
    ///     report(error)
    /// }
    /// ```
    public var isCancelled: Bool {
        switch self {
        case let error as CancellableError:
            return error.isCancelled
        case is CancellationError:
            return true
        case let error as URLError:
            return error.code == .cancelled
        case let error as CocoaError:
            return error.code == .userCancelled
        default:
            return false
        }
    }
}
