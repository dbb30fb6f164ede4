import Synchronization

/// The error the cancellable floor rejects with.
struct FloorCancelled: Error {}

/// "The cancellable floor": the leanest correct thread-safe cancellable promise — one object: a 4-byte lock
/// stored inline (`Mutex`), the result, the first handler and the first cancel action stored inline (an array
/// only for a second one), a count of open votes for shared work, and cancel actions that run once, outside the
/// lock, if a cancel wins. `map` links cancel their parent; `race` cancels its losers before it resolves;
/// `sharedRace` is one consumer of each input, which is cancelled once every consumer has cancelled. Handlers
/// and cancellation run inline and **recursively**; an abandoned pending graph is a cycle (a link's cancel action
/// holds its parent), and a consumer released without cancelling is never withdrawn: it stands for the physical
/// limit of the design, not for a usable library.
///
/// Its result is stored as the class's second generic parameter, `Slot` (always `Result<T, Error>?`), as
/// PromiseCore's box stores its state: the deinit of a generic class destroys a field whose type *is* a generic
/// parameter with metadata it already has, where a field of type `Result<T, Error>?` would make every deinit look
/// up that type's metadata at run time (hundreds of instructions per promise, which the library does not pay).
typealias CancellableFloorPromise<T> = CancellableFloorNode<T, Result<T, Error>?>

final class CancellableFloorNode<T, Slot>: @unchecked Sendable {
    // @unchecked Sendable: the fields are only touched under `lock`, which already makes every access exclusive:
    // the run-time exclusivity check is skipped, as it is on the library's own fields.
    private let lock = Mutex(())
    @exclusivity(unchecked) private var result: Slot
    @exclusivity(unchecked) private var firstHandler: ((Result<T, Error>) -> Void)?
    @exclusivity(unchecked) private var moreHandlers: [(Result<T, Error>) -> Void] = []
    @exclusivity(unchecked) private var firstCancelAction: (() -> Void)?
    @exclusivity(unchecked) private var moreCancelActions: [() -> Void] = []
    /// Votes still open on this promise (``addVote()``), for shared work.
    @exclusivity(unchecked) private var openVotes = 0

    init() where Slot == Result<T, Error>? {
        result = nil
    }

    init(onCancel: @escaping () -> Void) where Slot == Result<T, Error>? {
        result = nil
        firstCancelAction = onCancel
    }
}

extension CancellableFloorNode where Slot == Result<T, Error>? {

    /// Resolves unless resolved or cancelled already; returns whether it won. The cancel actions are released.
    @discardableResult
    func resolve(_ newResult: Result<T, Error>) -> Bool {
        settle(newResult, runningCancelActions: false)
    }

    /// Rejects with `FloorCancelled` and runs the cancel actions, if still pending; returns whether it won.
    @discardableResult
    func cancel() -> Bool {
        settle(.failure(FloorCancelled()), runningCancelActions: true)
    }

    /// Stores `outcome` unless resolved or cancelled already, then — outside the lock — runs the handlers, and the
    /// cancel actions if `runningCancelActions` (otherwise they are only released).
    private func settle(_ outcome: Result<T, Error>, runningCancelActions: Bool) -> Bool {
        var first: ((Result<T, Error>) -> Void)?
        var others: [(Result<T, Error>) -> Void] = []
        var action: (() -> Void)?
        var moreActions: [() -> Void] = []
        let won = lock.withLock { _ -> Bool in
            guard result == nil else { return false }
            result = outcome
            first = firstHandler.take()
            swap(&others, &moreHandlers)
            action = firstCancelAction.take()
            swap(&moreActions, &moreCancelActions)
            return true
        }
        guard won else { return false }
        first?(outcome)
        for handler in others { handler(outcome) }
        if runningCancelActions {
            action?()
            for action in moreActions { action() }
        }
        return true
    }

    func whenComplete(_ handler: @escaping (Result<T, Error>) -> Void) {
        var resolved: Result<T, Error>?
        lock.withLock { _ in
            if let result {
                resolved = result
            } else if firstHandler == nil {
                firstHandler = handler
            } else {
                moreHandlers.append(handler)
            }
        }
        if let resolved { handler(resolved) }
    }

    /// Opens a vote for a consumer that may cancel this promise through ``castVote()`` (shared work).
    func addVote() {
        lock.withLock { _ in openVotes += 1 }
    }

    /// One vote cast: the promise is cancelled once every vote opened has been.
    func castVote() {
        let last = lock.withLock { _ -> Bool in
            openVotes -= 1
            return openVotes == 0
        }
        if last { cancel() }
    }

    /// A link whose cancellation cancels this promise.
    func map<U>(_ transform: @escaping (T) -> U) -> CancellableFloorPromise<U> {
        let next = CancellableFloorPromise<U>(onCancel: { self.cancel() })
        whenComplete { next.resolve($0.map(transform)) }
        return next
    }

    var isCancelled: Bool {
        var cancelled = false
        lock.withLock { _ in
            if case .failure(let error)? = result { cancelled = error is FloorCancelled }
        }
        return cancelled
    }

    /// The first input to resolve wins: every input is cancelled (a no-op for resolved ones) — their cancel
    /// actions have run — and then the race resolves, as the library's `autoCancel` race does.
    static func race(_ inputs: [CancellableFloorPromise<T>]) -> CancellableFloorPromise<T> {
        let winner = CancellableFloorPromise<T>()
        let decision = RaceDecision()
        for input in inputs {
            input.whenComplete { result in
                guard decision.claim() else { return }
                for input in inputs { input.cancel() }
                winner.resolve(result)
            }
        }
        return winner
    }
}

extension CancellableFloorNode where Slot == Result<T, Error>? {
    /// `race` over inputs that other consumers may share: counted as one consumer of each, it casts its vote on
    /// every input before it resolves.
    static func sharedRace(_ inputs: [CancellableFloorPromise<T>]) -> CancellableFloorPromise<T> {
        let winner = CancellableFloorPromise<T>()
        let decision = RaceDecision()
        for input in inputs {
            input.addVote()
            input.whenComplete { result in
                guard decision.claim() else { return }
                for input in inputs { input.castVote() }
                winner.resolve(result)
            }
        }
        return winner
    }
}

/// Who won a race: claimed once.
final class RaceDecision: Sendable {
    private let decided = Atomic(false)

    /// Whether this call is the first.
    func claim() -> Bool {
        !decided.exchange(true, ordering: .acquiringAndReleasing)
    }
}
