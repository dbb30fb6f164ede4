import PromiseCore

/// The cancellation state machine of one ``CancellablePromise``: the single place where a cancel racing a
/// resolution is decided (Guarantees, rule 3).
///
/// A pure value, in the style of swift-async-algorithms' state machines: each event is a `mutating` method
/// that changes the state and returns an *action* — what the owner must do. The owner calls it under its lock
/// (``LockedCancellationState``) and carries the action out after releasing it: resolving the promise's box,
/// handing the `OnCancel` callbacks to ``CancelPropagation``, or letting released callbacks deallocate (their
/// captures may run arbitrary `deinit`s, which must not run under the lock).
@usableFromInline
struct CancellationState {
    /// What to do when the promise is cancelled: run the user's cancel handler, cancel the upstream link of a
    /// chain, cancel the promise a `then` body returned, cancel a combinator's inputs.
    @usableFromInline
    typealias OnCancel = (CancellationReason) -> Void

    @usableFromInline
    enum CancelAction {
        /// This call cancelled the promise: reject it, then run `callbacks`.
        case cancel(OnCancelList)
        /// This call cancelled an `autoCancel` combinator: run `callbacks` (its votes on its inputs, so the inputs
        /// still pending are cancelled and their cancel handlers run), then reject it (Guarantees, rule 10).
        case cancelInputsThenReject(OnCancelList)
        /// An earlier call cancelled it, for this reason; make sure the rejection is in place before returning.
        case alreadyCancelled(CancellationReason)
        /// An earlier call cancelled this `autoCancel` combinator and rejects it once its inputs are cancelled:
        /// nothing to do here (rejecting it now would deliver the rejection before the inputs' cancel handlers
        /// have run).
        case inputsBeingCancelled
        /// The promise resolved first; nothing to do.
        case alreadyResolved
        /// A vote was cast, but other votes are still open: nothing to do yet.
        case otherVotesOpen
        /// The vote cast was closed already — cast before, withdrawn, or never counted — and the promise is still
        /// pending: it changes nothing.
        case voteClosed
    }

    @usableFromInline
    enum ResolveAction {
        /// This result wins: resolve the box with it; `released` is dropped after the lock is released.
        case resolve(released: OnCancelList)
        /// This result wins and the promise is an `autoCancel` combinator: run `callbacks` (its votes on its
        /// inputs) with ``CancellationReason/lostRace`` (or ``CancellationReason/anotherInputFailed`` for a
        /// rejection, chosen by ``LinkSink/cancelInputs(_:thenResolve:inHandler:)``), so that every input still
        /// pending is cancelled and its cancel handlers have run, then resolve the box (Guarantees, rule 10).
        case cancelInputsThenResolve(OnCancelList)
        /// The promise was cancelled or resolved already; drop the result.
        case ignore
    }

    @usableFromInline
    enum AddAction {
        /// Kept; it runs if the promise is cancelled while pending.
        case stored
        /// The promise is already cancelled, for this reason: run the callback now.
        case runNow(CancellationReason)
        /// The promise resolved, or nobody can cancel it any more: the callback will never be needed.
        case discard
    }

    /// What a withdrawn vote, or the release of the promise object, leads to.
    @usableFromInline
    enum ReleaseAction {
        /// Nothing: someone can still cancel the promise, or it is cancelled or resolved already.
        case none
        /// Every other vote was cast: cancel the promise for the last cast's reason, carrying out `action`.
        case cancel(CancelAction, CancellationReason)
        /// Nobody can cancel the promise any more: release `entries` — its votes upstream (which withdraws them)
        /// and a wrapper's `cancelPromise` (which fulfills it) — in the release loop. Cancel handlers stay until
        /// the promise resolves: they may own the work (a timer, a task) that will resolve it.
        case orphaned(OnCancelList)
    }

    // In this order the state packs into 56 bytes (a `LockedCancellationState` into 104, one malloc size class
    // smaller than 120): the callbacks (which end with a 17-byte entry), the one-byte phase, flag and inline vote in
    // its last word, the two counts, then the reason. An enum of the phase with the reason as payload would take 17
    // bytes and 7 of padding.

    /// The callbacks, while pending; moved out when the state leaves `pending` or nobody can cancel it any more.
    @usableFromInline
    var callbacks: OnCancelList
    @usableFromInline
    var phase: Phase
    /// Whether this promise cancels its inputs when it resolves, before its box (an `autoCancel` combinator): its
    /// callbacks — its votes on its inputs — are cast with ``CancellationReason/lostRace`` (or
    /// ``CancellationReason/anotherInputFailed`` if it rejects).
    @usableFromInline
    var cancelsInputsOnResolution: Bool
    /// The vote kept in this state itself, for the first consumer that votes (most promises have exactly one: a
    /// chain link, a combinator): its open flag lives here, so that the vote costs no object of its own. Later
    /// consumers get a ``Vote`` object.
    @usableFromInline
    var inlineVote: InlineVote
    /// How many votes are open: counted (``addVote()``), neither cast nor withdrawn. Each belongs to a consumer
    /// that can cancel this promise (a link, a follower, a timeout, an `autoCancel` combinator). When the last
    /// one closes, the promise is cancelled if any vote was cast (for the last cast's ``reason``).
    @usableFromInline
    var openVotes: UInt32
    /// How many holders can still cancel the promise directly: its `CancellablePromise` object, while alive
    /// (its owner can call `cancel()` or attach links), and the ``CancelHold``s of scopes and finalizers.
    @usableFromInline
    var holders: UInt32
    /// While pending, the reason of the last vote cast while others remained open (`nil` if none was);
    /// once cancelled, why; once resolved, `nil`.
    @usableFromInline
    var reason: CancellationReason?

    /// Where the vote kept in the state stands (``inlineVote``).
    @usableFromInline
    enum InlineVote: UInt8 {
        /// No consumer has taken it yet.
        case free
        /// Taken, and open: counted in ``openVotes``, neither cast nor withdrawn.
        case open
        /// Taken, and closed: cast or withdrawn. It is never handed out again.
        case closed
    }

    /// Where the promise stands.
    @usableFromInline
    enum Phase: UInt8 {
        /// Neither cancelled nor resolved; the callbacks run if a cancel comes first. ``reason`` is the reason of
        /// the last vote cast while others remained open, if any.
        case pending
        /// `cancel()` won: the promise is (being) rejected with `CancellablePromiseError(reason:)`, ``reason``.
        case cancelled
        /// A result won: cancelling is a no-op from now on.
        case resolved
    }

    @inlinable
    init(callbacks: consuming OnCancelList = OnCancelList(), cancelsInputsOnResolution: Bool = false) {
        self.callbacks = callbacks
        phase = .pending
        self.cancelsInputsOnResolution = cancelsInputsOnResolution
        inlineVote = .free
        openVotes = 0
        holders = 1
        reason = nil
    }

    /// Why the promise was cancelled, if `cancel()` won.
    @inlinable
    var cancellationReason: CancellationReason? {
        phase == .cancelled ? reason : nil
    }

    /// Whether `cancel()` won.
    @inlinable
    var isCancelled: Bool {
        cancellationReason != nil
    }

    /// Whether the promise is orphaned: pending, and nobody can cancel it any more — no holder (its object is
    /// released, and no scope or finalizer holds it) and no open vote.
    @inlinable
    var isOrphaned: Bool {
        phase == .pending && holders == 0 && openVotes == 0
    }

    /// Counts a new consumer's vote: the consumer may later cast it (``castVote(_:reason:)``) or withdraw it
    /// (``withdrawVote(_:)``).
    ///
    /// - Returns: whether the vote is open — counted, because the promise is pending. A vote that is not open
    ///   changes nothing when it is cast or withdrawn.
    @inlinable
    mutating func addVote() -> Bool {
        guard phase == .pending else { return false }
        openVotes &+= 1
        return true
    }

    /// Counts a new consumer's vote in the state's own slot (``inlineVote``), if the promise is pending and the slot
    /// was never taken: the consumer then casts it with ``castInlineVote(reason:)`` and must withdraw it with
    /// ``withdrawInlineVote()`` when it lets go uncast (an ``OnCancelEntry/inlineVote(_:)`` in its callbacks: see
    /// ``OnCancelList/releaseUncast()``).
    ///
    /// - Returns: whether the slot was taken; if not, the consumer gets a ``Vote`` object (``addVote()``).
    @inlinable
    mutating func addInlineVote() -> Bool {
        guard phase == .pending, inlineVote == .free else { return false }
        inlineVote = .open
        openVotes &+= 1
        return true
    }

    /// ``castVote(_:reason:)`` for the vote in the state's own slot.
    @inlinable
    @inline(__always)
    mutating func castInlineVote(reason: CancellationReason) -> CancelAction {
        var isOpen = inlineVote == .open
        defer { if !isOpen { closeInlineVote() } }
        return castVote(&isOpen, reason: reason)
    }

    /// ``withdrawVote(_:)`` for the vote in the state's own slot.
    @inlinable
    @inline(__always)
    mutating func withdrawInlineVote() -> ReleaseAction {
        var isOpen = inlineVote == .open
        defer { if !isOpen { closeInlineVote() } }
        return withdrawVote(&isOpen)
    }

    /// Marks the slot's vote closed (it was open, or is closed already).
    @inlinable
    @inline(__always)
    mutating func closeInlineVote() {
        if inlineVote == .open { inlineVote = .closed }
    }

    /// A consumer casts its vote (`isOpen` is the vote's own flag, kept under this state's lock): the promise is
    /// cancelled if it was the last open vote.
    ///
    /// A vote that is no longer open — cast already, withdrawn, or never counted — changes no count, but if a
    /// cancellation has already been decided it re-asserts it (``CancelAction/alreadyCancelled(_:)``), so that the
    /// caster returns with the rejection in place.
    @inlinable
    @inline(__always)
    mutating func castVote(_ isOpen: inout Bool, reason: CancellationReason) -> CancelAction {
        // One call of `cancel(reason:)` for every path that reaches it, and inlined always: with three call sites
        // the optimiser kept this and `cancel` out of the cancel loop (race-cancel in the benchmark package).
        if isOpen {
            isOpen = false
            if phase == .pending {
                closeOpenVote()
                guard openVotes == 0 else {
                    self.reason = reason
                    return .otherVotesOpen
                }
            }
        } else if phase == .pending {
            return .voteClosed
        }
        return cancel(reason: reason)
    }

    /// A consumer's vote is withdrawn uncast (the vote was released): nobody can cancel through it any more. If
    /// every other vote was cast, the promise is cancelled now, for the last cast's reason — a withdrawal never
    /// loses a cast; if nobody at all can cancel it, it is orphaned.
    @inlinable
    @inline(__always)
    mutating func withdrawVote(_ isOpen: inout Bool) -> ReleaseAction {
        // Most votes are released closed, or open on a promise that has settled: those checks are inlined into the
        // vote's deinit. The rest is rare, and kept out of line: inlined too, it made the deinit's closure too big
        // to inline into the lock's `withLock` (race-cancel in the benchmark package shows the cost).
        guard isOpen else { return .none }
        isOpen = false
        guard phase == .pending else { return .none }
        return withdrawOpenVoteOnPendingPromise()
    }

    /// ``withdrawVote(_:)`` of an open vote on a pending promise.
    @inlinable
    @inline(never)
    mutating func withdrawOpenVoteOnPendingPromise() -> ReleaseAction {
        closeOpenVote()
        guard openVotes == 0 else { return .none }
        if let reason {
            return .cancel(cancel(reason: reason), reason)
        }
        return releaseIfOrphaned()
    }

    /// Uncounts an open vote of this pending promise, as it is cast or withdrawn.
    @inlinable
    @inline(__always)
    mutating func closeOpenVote() {
        guard openVotes > 0 else {
            preconditionFailure("A vote was open on a pending promise that counts no open vote: one was closed twice")
        }
        openVotes &-= 1
    }

    /// Counts a holder that can cancel the promise directly (a ``CancelHold``).
    ///
    /// - Returns: whether the hold counts (the promise is pending).
    @inlinable
    mutating func addHolder() -> Bool {
        guard phase == .pending else { return false }
        holders &+= 1
        return true
    }

    /// A holder was released — the `CancellablePromise` object was deallocated, or a ``CancelHold`` — : if no
    /// other holder and no open vote is left, the promise is orphaned.
    @inlinable
    mutating func releaseHolder() -> ReleaseAction {
        guard holders > 0 else {
            preconditionFailure("A holder was released by a promise that counts none: one was released twice")
        }
        holders &-= 1
        return releaseIfOrphaned()
    }

    /// If nobody can cancel the promise any more, moves out what it no longer needs.
    @inlinable
    mutating func releaseIfOrphaned() -> ReleaseAction {
        isOrphaned && !callbacks.isEmpty ? .orphaned(takeReleasedWhenOrphaned()) : .none
    }

    @inlinable
    mutating func cancel(reason: CancellationReason) -> CancelAction {
        switch phase {
        case .pending:
            phase = .cancelled
            self.reason = reason
            return cancelsInputsOnResolution ? .cancelInputsThenReject(takeCallbacks()) : .cancel(takeCallbacks())
        case .cancelled:
            return cancelsInputsOnResolution
                ? .inputsBeingCancelled : .alreadyCancelled(self.reason.unsafelyUnwrapped)
        case .resolved:
            return .alreadyResolved
        }
    }

    @inlinable
    mutating func resolve() -> ResolveAction {
        switch phase {
        case .pending:
            phase = .resolved
            reason = nil
            return cancelsInputsOnResolution
                ? .cancelInputsThenResolve(takeCallbacks()) : .resolve(released: takeCallbacks())
        case .cancelled, .resolved:
            return .ignore
        }
    }

    @inlinable
    mutating func add(_ callback: OnCancelEntry) -> AddAction {
        switch phase {
        case .pending:
            if isOrphaned, !callback.isKeptWhenOrphaned { return .discard }
            callbacks.append(callback)
            return .stored
        case .cancelled:
            return .runNow(reason.unsafelyUnwrapped)
        case .resolved:
            return .discard
        }
    }

    /// Moves the callbacks out (a move: no retain and release of each).
    @inlinable
    mutating func takeCallbacks() -> OnCancelList {
        var taken = OnCancelList()
        swap(&taken, &callbacks)
        return taken
    }

    /// Moves out the entries an orphaned promise no longer needs (rare: not inlined). An `autoCancel`
    /// combinator keeps its votes: it casts them itself when its outcome is decided.
    @usableFromInline
    mutating func takeReleasedWhenOrphaned() -> OnCancelList {
        guard !cancelsInputsOnResolution else { return OnCancelList() }
        let all = takeCallbacks()
        var released = OnCancelList()
        // Entry by entry, without gathering them into an array first: most lists have one entry, stored inline.
        if let first = all.first {
            if first.isKeptWhenOrphaned { callbacks.append(first) } else { released.append(first) }
        }
        for entry in all.rest {
            if entry.isKeptWhenOrphaned { callbacks.append(entry) } else { released.append(entry) }
        }
        return released
    }
}

/// One thing to do when a cancellable promise is cancelled.
@usableFromInline
enum OnCancelEntry {
    /// Run this: the user's cancel handler, a combinator's bookkeeping.
    case action(CancellationState.OnCancel)
    /// Cast this vote: cancel an upstream promise, as one of its consumers (a link's upstream, the promise a
    /// `then` body returned, a combinator's input). Released without being cast, it withdraws.
    case vote(Vote)
    /// Cast the vote kept in this upstream state's own slot (``CancellationState/inlineVote``): a ``vote(_:)``
    /// without an object of its own. Released without being cast, it must be withdrawn explicitly — it has no
    /// deinit to do so —, which ``OnCancelList/releaseUncast()`` and ``OnCancelList/releaseUncastWithoutRecursion()``
    /// do: every list that may hold one is released through one of them.
    case inlineVote(LockedCancellationState)
    /// Reject this `cancelPromise` (of `init(wrapper:)`). Released without being rejected, it fulfills.
    case cancelPromise(CancelPromise)

    /// Runs the entry for a cancellation with `reason`.
    @inlinable
    func run(_ reason: CancellationReason) {
        switch self {
        case .action(let action): action(reason)
        case .vote(let vote): vote.cast(reason)
        case .inlineVote(let state): state.castInlineVote(reason)
        case .cancelPromise(let cancelPromise): cancelPromise.reject(reason)
        }
    }

    /// Whether an orphaned promise — one nobody can cancel any more — keeps this entry: a cancel handler may own
    /// the work, so it stays until the promise resolves; a vote or a `cancelPromise` is released at once.
    @inlinable
    var isKeptWhenOrphaned: Bool {
        if case .action = self { return true }
        return false
    }
}

/// A cancellable promise's `OnCancel` entries, in the order they were added. Most promises have one (the
/// user's cancel handler, or a link's vote on its upstream), stored inline: no array is allocated for it.
@usableFromInline
struct OnCancelList {
    // `rest` first: `first` (17 bytes) then ends the struct, and the fields after a list pack into its last word.
    @usableFromInline
    var rest: [OnCancelEntry]
    @usableFromInline
    var first: OnCancelEntry?

    @inlinable
    init() {
        first = nil
        rest = []
    }

    @inlinable
    init(_ entry: OnCancelEntry) {
        first = entry
        rest = []
    }

    @inlinable
    init(_ callback: @escaping CancellationState.OnCancel) {
        self.init(.action(callback))
    }

    @inlinable
    var isEmpty: Bool { first == nil }

    /// Makes room for `count` entries in all, so that appending them grows no array step by step.
    @inlinable
    mutating func reserveCapacity(_ count: Int) {
        if count > 1 { rest.reserveCapacity(count - 1) }
    }

    @inlinable
    mutating func append(_ entry: OnCancelEntry) {
        if first == nil {
            first = entry
        } else {
            rest.append(entry)
        }
    }
}

extension OnCancelList {
    /// Lets go of the entries of a promise that resolved, without running them: an inline vote
    /// (``OnCancelEntry/inlineVote(_:)``) is withdrawn, everything else is dropped here, its deinit withdrawing a
    /// ``Vote`` (the promise it votes on has resolved or keeps another vote: nothing follows) and fulfilling a
    /// `cancelPromise`.
    ///
    /// Lists dropped in other ways — an orphaned promise's, a state's left at its deinit — go through
    /// ``releaseUncastWithoutRecursion()``.
    @inlinable
    consuming func releaseUncast() {
        // The common case, inlined: one entry, a link's vote on its upstream, which is resolved (nothing follows).
        if case .inlineVote(let upstream)? = first {
            if let orphaned = upstream.withdrawInlineVote() { orphaned.releaseUncastWithoutRecursion() }
        }
        for entry in rest {
            guard case .inlineVote(let upstream) = entry else { continue }
            if let orphaned = upstream.withdrawInlineVote() { orphaned.releaseUncastWithoutRecursion() }
        }
    }

    /// Lets go of the entries without running them, in constant stack: inline votes
    /// (``OnCancelEntry/inlineVote(_:)``) are withdrawn, everything else is handed to the release loop, whose
    /// deinits withdraw ``Vote``s and fulfill `cancelPromise`s. An orphaned promise's entries and a state's left at
    /// its deinit go through here.
    ///
    /// Withdrawing a vote may orphan the promise upstream, which lets go of its own entries in turn, and so on up a
    /// chain: those come back to this loop, not to a nested call, so a chain of any length is released in constant
    /// stack.
    @usableFromInline
    consuming func releaseUncastWithoutRecursion() {
        var next: OnCancelList? = consume self
        var backlog: [OnCancelList] = []
        var others = OnCancelList()
        func route(_ entry: OnCancelEntry) {
            guard case .inlineVote(let upstream) = entry else { return others.append(entry) }
            guard let orphaned = upstream.withdrawInlineVote() else { return }
            // One list follows another up a chain without touching the backlog (no allocation).
            if next == nil { next = orphaned } else { backlog.append(orphaned) }
        }
        while var list = next.take() ?? backlog.popLast() {
            if let first = list.first.take() { route(first) }
            for entry in list.rest { route(entry) }
            list.rest = []  // `others` now holds the only references
            if !others.isEmpty {
                var released = OnCancelList()
                swap(&released, &others)
                releaseWithoutRecursion((consume released).releasePayload())
            }
        }
    }

    /// What to hand to the release loop, which takes the only reference: the entry itself when there is one (its
    /// closure or object fits in an `Any` without a heap box), the whole list otherwise. The list holds no inline
    /// vote (``releaseUncastWithoutRecursion()`` withdraws those itself).
    @usableFromInline
    consuming func releasePayload() -> Any {
        guard rest.isEmpty, let first else { return self }
        switch first {
        case .action(let callback): return callback
        case .vote(let vote): return vote
        case .inlineVote: return self
        case .cancelPromise(let cancelPromise): return cancelPromise
        }
    }
}
