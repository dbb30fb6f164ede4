public import Foundation
public import PromiseCore

/// The error a ``CancellablePromise`` rejects with when it is cancelled, and why.
///
/// It is a `CancellableError`, so `catch` with the default policy skips it and `error.isCancelled` is true.
/// ``cancelled`` matches every cancellation, whatever its ``reason``, exactly as CancellablePromiseKit's
/// `case cancelled` did:
///
/// ```swift
/// download.catch(policy: .allErrors) { error in
///     if case CancellablePromiseError.cancelled = error {
///         print("stopped:", error.cancellationReason ?? .user)
///     }
/// }
/// ```
///
/// Two values are equal whatever their reasons — the error says *that* the promise was cancelled, ``reason``
/// says why — so `error as? CancellablePromiseError == .cancelled` keeps its meaning. Compare reasons to
/// tell cancellations apart. Unlike CancellablePromiseKit's enum, a `switch` over this type needs a
/// `default:` clause.
public struct CancellablePromiseError: Error, CancellableError, Sendable {
    /// Why the promise was cancelled.
    public let reason: CancellationReason

    /// Makes the error of a cancellation for `reason`.
    public init(reason: CancellationReason) {
        self.reason = reason
    }

    /// A cancellation by ``CancellablePromise/cancel()``; as a pattern, it matches every cancellation.
    ///
    /// ```swift
    /// do { _ = try await download.async() } catch CancellablePromiseError.cancelled { showStopped() }
    /// ```
    public static let cancelled = CancellablePromiseError(reason: .user)

    /// Always true: this error only ever means cancellation.
    public var isCancelled: Bool { true }

    /// The error a promise cancelled for `reason` rejects with, as an `Error`: for every reason but `.custom`, one
    /// value boxed once and shared, so that a cancellation that rejects a whole chain (or a race's losers) does not
    /// allocate an error box per promise. The errors are equal and immutable: sharing cannot be observed.
    @usableFromInline
    static func rejection(for reason: CancellationReason) -> any Error {
        switch reason {
        case .user: Shared.user
        case .timeout: Shared.timeout
        case .lostRace: Shared.lostRace
        case .anotherInputFailed: Shared.anotherInputFailed
        case .superseded: Shared.superseded
        case .ownerReleased: Shared.ownerReleased
        case .paused: Shared.paused
        case .custom: CancellablePromiseError(reason: reason)
        }
    }

    /// The errors ``rejection(for:)`` shares, each boxed as an `Error` once, when first used.
    private enum Shared {
        static let user: any Error = CancellablePromiseError(reason: .user)
        static let timeout: any Error = CancellablePromiseError(reason: .timeout)
        static let lostRace: any Error = CancellablePromiseError(reason: .lostRace)
        static let anotherInputFailed: any Error = CancellablePromiseError(reason: .anotherInputFailed)
        static let superseded: any Error = CancellablePromiseError(reason: .superseded)
        static let ownerReleased: any Error = CancellablePromiseError(reason: .ownerReleased)
        static let paused: any Error = CancellablePromiseError(reason: .paused)
    }

    /// Matches any `CancellablePromiseError`, whatever its reason: `case CancellablePromiseError.cancelled`.
    public static func ~= (pattern: CancellablePromiseError, value: any Error) -> Bool {
        value is CancellablePromiseError
    }

    /// Matches any `CancellablePromiseError`, whatever its reason: `case .cancelled` in a `switch`.
    public static func ~= (pattern: CancellablePromiseError, value: CancellablePromiseError) -> Bool {
        true
    }
}

extension CancellablePromiseError: Hashable {
    /// Always true: every cancellation equals every other, whatever its ``reason``.
    public static func == (lhs: CancellablePromiseError, rhs: CancellablePromiseError) -> Bool {
        true
    }

    /// Hashes nothing, consistently with `==`.
    public func hash(into hasher: inout Hasher) {}
}

extension CancellablePromiseError: LocalizedError {
    /// "The promise was cancelled", with the reason unless it is ``CancellationReason/user``.
    public var errorDescription: String? {
        reason == .user ? "The promise was cancelled" : "The promise was cancelled (\(reason))"
    }
}

extension Error {
    /// Why the promise was cancelled, if this error is a ``CancellablePromiseError``; `nil` otherwise.
    ///
    /// ```swift
    /// chain.catch(policy: .allErrors) { error in
    ///     if error.cancellationReason == .timeout { offerRetry() }
    /// }
    /// ```
    public var cancellationReason: CancellationReason? {
        (self as? CancellablePromiseError)?.reason
    }
}

/// The error ``CancellablePromise/timeout(seconds:clock:)`` rejects with when the deadline passes first.
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
