/// Why a ``CancellablePromise`` was cancelled.
///
/// Every cancellation carries one: ``CancellablePromise/cancel()`` uses ``user``, a timeout ``timeout``, an
/// `autoCancel` combinator ``lostRace`` (or ``anotherInputFailed``), a ``CancelScope`` released with pending work
/// ``ownerReleased``.
/// Read it from the rejection (`error.cancellationReason`), from the promise
/// (``CancellablePromise/cancellationReason``), or in a cancel handler that takes it:
///
/// ```swift
/// let download = CancellablePromise<Data> { resolver in
///     let task = startDownload(resolver)
///     return { reason in
///         if reason == .timeout { metrics.countTimeout() }
///         task.cancel()
///     }
/// }
/// download.cancel(reason: .superseded)
/// ```
///
/// The reason travels with the cancellation: up a chain, into the promise a `then` body returned, and into a
/// combinator's inputs.
public enum CancellationReason: Sendable, Hashable {
    /// Someone called ``CancellablePromise/cancel()``: the default.
    case user
    /// ``CancellablePromise/timeout(seconds:clock:)`` ran out of time.
    case timeout
    /// An `autoCancel` combinator (`race`, `when`, `any`, `some`) fulfilled without this input: another input won.
    case lostRace
    /// An `autoCancel` combinator failed because another of its inputs failed — `when(fulfilled:)` at its first
    /// rejection, `race` decided by a rejection, `some` once too few inputs can still fulfill — and cancelled this
    /// input with it: this input did nothing wrong.
    case anotherInputFailed
    /// Newer work replaced this one (a new search query, a reload).
    case superseded
    /// The ``CancelScope`` that owned the work was deallocated.
    case ownerReleased
    /// The work stopped so that it can continue later: a resumable download keeps the bytes it has
    /// (CancellableURLSession's `ResumableDownload.pause()`). Work that cannot continue treats it as any other
    /// cancellation.
    case paused
    /// A reason of the application's own.
    case custom(String)
}

extension CancellationReason: CustomStringConvertible {
    /// A short description: "user", "timeout", "lost race", "another input failed", "superseded", "owner released",
    /// "paused" or the custom text.
    public var description: String {
        switch self {
        case .user: "user"
        case .timeout: "timeout"
        case .lostRace: "lost race"
        case .anotherInputFailed: "another input failed"
        case .superseded: "superseded"
        case .ownerReleased: "owner released"
        case .paused: "paused"
        case .custom(let text): text
        }
    }
}
