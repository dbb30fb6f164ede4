import PromiseCore

/// Owns cancellable work for as long as something lives — a screen, a request handler — and cancels what is
/// still pending when asked, or, if you opt in, when the scope itself is deallocated.
///
/// ```swift
/// final class SearchViewController: UIViewController {
///     private let scope = CancelScope(cancelsOnDeinit: true)   // closing the screen stops its work
///
///     func search(_ query: String) {
///         scope.cancelAll(reason: .superseded)                  // a new query replaces the old one
///         scope.add(api.search(query)).done { self.show($0) }
///     }
/// }
/// ```
///
/// Adding a promise does not keep it or its chain alive (nor what its handlers capture), and a resolved promise
/// leaves the scope by itself. While it is in the scope it can still be cancelled, so it counts as held: a branch
/// of shared work kept only by a scope still wants the work.
/// The scope cancels its promises directly, like ``CancellablePromise/cancel(reason:)``: a shared promise is
/// cancelled even if other branches consume it. By default a scope that is deallocated cancels nothing — a
/// dropped reference never stops work by accident; pass `cancelsOnDeinit: true` to cancel what is still
/// pending with ``CancellationReason/ownerReleased``.
///
/// Thread-safe: add, cancel and release from any thread. A scope can be used again after
/// ``cancelAll(reason:)``; promises added later are kept until they resolve or the next ``cancelAll(reason:)``.
public final class CancelScope: Sendable {
    private let members = CancelSet()
    private let cancelsOnDeinit: Bool

    /// Makes an empty scope.
    ///
    /// ```swift
    /// let requestScope = CancelScope(cancelsOnDeinit: true)
    /// ```
    ///
    /// - Parameter cancelsOnDeinit: whether deallocating the scope cancels its pending promises, with
    ///   ``CancellationReason/ownerReleased``. Off by default.
    public init(cancelsOnDeinit: Bool = false) {
        self.cancelsOnDeinit = cancelsOnDeinit
    }

    deinit {
        if cancelsOnDeinit {
            cancelAll(reason: .ownerReleased)
        }
    }

    /// Adds `promise` to the scope until it resolves, and returns it.
    ///
    /// ```swift
    /// scope.add(download(url)).done { show($0) }
    /// ```
    @discardableResult
    public func add<T>(_ promise: CancellablePromise<T>) -> CancellablePromise<T> {
        // A hold, not the promise: while the scope has it, it can be cancelled, so its votes on a shared upstream
        // promise stand even if nobody else holds it; but its box (and what its handlers capture, often the
        // scope's owner) is not kept alive.
        let hold = CancelHold(promise)
        members.track({ hold.cancel(reason: $0) }, until: promise.promise)
        return promise
    }

    /// Adds the chain `finalizer` ends to the scope until it finishes, and returns the finalizer.
    ///
    /// ```swift
    /// scope.add(download(url).done { show($0) }.catch { show($0) })
    /// ```
    @discardableResult
    public func add(_ finalizer: CancellableFinalizer) -> CancellableFinalizer {
        members.track({ finalizer.cancel(reason: $0) }, until: finalizer.finished)
        return finalizer
    }

    /// Cancels every promise of the scope that is still pending, with `reason`, and empties the scope.
    ///
    /// ```swift
    /// stopAllButton.onTap { scope.cancelAll() }
    /// ```
    ///
    /// Promises added while this runs are either cancelled or kept, never lost.
    public func cancelAll(reason: CancellationReason = .user) {
        members.cancelAll(reason: reason, closing: false)
    }

    /// How many promises of the scope are still pending.
    public var pendingCount: Int {
        members.count
    }
}
