import Foundation

/// The error the cancellable floor rejects with.
struct FloorCancelled: Error {}

/// "The cancellable floor": the simplest correct thread-safe cancellable promise — one lock, the result, the
/// handlers, and cancel actions that run once, outside the lock, if a cancel wins. `map` links cancel their
/// parent; `race` cancels its inputs once decided. Handlers and cancellation run inline and **recursively**;
/// an abandoned pending graph is a cycle (a link's cancel action holds its parent): it stands for the physical
/// limit of the design, not for a usable library.
final class CancellableFloorPromise<T>: @unchecked Sendable {
    // @unchecked Sendable: `result`, `handlers` and `cancelActions` are only touched under `lock`.
    private let lock = NSLock()
    private var result: Result<T, Error>?
    private var handlers: [(Result<T, Error>) -> Void] = []
    private var cancelActions: [() -> Void] = []

    init() {}

    init(onCancel: @escaping () -> Void) {
        cancelActions = [onCancel]
    }

    /// Resolves unless resolved or cancelled already; returns whether it won.
    @discardableResult
    func resolve(_ newResult: Result<T, Error>) -> Bool {
        lock.lock()
        guard result == nil else {
            lock.unlock()
            return false
        }
        result = newResult
        let waiting = handlers
        handlers = []
        cancelActions = []
        lock.unlock()
        for handler in waiting { handler(newResult) }
        return true
    }

    /// Rejects with `FloorCancelled` and runs the cancel actions, if still pending.
    @discardableResult
    func cancel() -> Bool {
        lock.lock()
        guard result == nil else {
            lock.unlock()
            return false
        }
        let cancelled = Result<T, Error>.failure(FloorCancelled())
        result = cancelled
        let waiting = handlers
        let actions = cancelActions
        handlers = []
        cancelActions = []
        lock.unlock()
        for handler in waiting { handler(cancelled) }
        for action in actions { action() }
        return true
    }

    func whenComplete(_ handler: @escaping (Result<T, Error>) -> Void) {
        lock.lock()
        if let result {
            lock.unlock()
            handler(result)
            return
        }
        handlers.append(handler)
        lock.unlock()
    }

    /// A link whose cancellation cancels this promise.
    func map<U>(_ transform: @escaping (T) -> U) -> CancellableFloorPromise<U> {
        let next = CancellableFloorPromise<U>(onCancel: { self.cancel() })
        whenComplete { next.resolve($0.map(transform)) }
        return next
    }

    var isCancelled: Bool {
        lock.lock()
        defer { lock.unlock() }
        if case .failure(let error)? = result { return error is FloorCancelled }
        return false
    }

    /// The first to resolve wins; then every input is cancelled (a no-op for resolved ones).
    static func race(_ inputs: [CancellableFloorPromise<T>]) -> CancellableFloorPromise<T> {
        let winner = CancellableFloorPromise<T>()
        for input in inputs {
            input.whenComplete { result in
                if winner.resolve(result) {
                    for input in inputs { input.cancel() }
                }
            }
        }
        return winner
    }
}
