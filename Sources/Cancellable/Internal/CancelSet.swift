import PromiseCore

/// The cancel functions of a set of pending promises: what a ``CancelScope`` owns, and what a cancellable
/// `when(fulfilled:concurrently:)` has in flight.
///
/// A member leaves the set when its promise resolves. The set never holds a promise, only what cancels it
/// (a `CancelHandle` or a consumer's action), so it keeps no chain alive; a member's handler holds the set
/// weakly, so a member that never resolves does not keep the set alive either.
final class CancelSet: Sendable {
    private struct Members {
        var nextID: UInt64 = 0
        var cancels: [UInt64: CancellationState.OnCancel] = [:]
        /// Set by a closing `cancelAll`: members added later are cancelled at once, for this reason.
        var closedReason: CancellationReason?
    }

    private let members = Locked(Members())

    private enum Added {
        case kept(id: UInt64)
        case closed(CancellationReason)
    }

    /// Whether a closing `cancelAll` has run.
    var isClosed: Bool {
        members.withLock { $0.closedReason != nil }
    }

    /// How many members are still pending.
    var count: Int {
        members.withLock { $0.cancels.count }
    }

    /// Keeps `cancel` until `promise` resolves; runs it at once if the set is closed.
    func track<U: Thenable>(_ cancel: @escaping CancellationState.OnCancel, until promise: U) {
        let added = members.withLock { members -> Added in
            if let reason = members.closedReason { return .closed(reason) }
            let id = members.nextID
            members.nextID &+= 1
            members.cancels[id] = cancel
            return .kept(id: id)
        }
        switch added {
        case .kept(let id):
            promise.pipe { [weak self] _ in
                _ = self?.members.withLock { $0.cancels.removeValue(forKey: id) }
            }
        case .closed(let reason):
            cancel(reason)
        }
    }

    /// Cancels every member with `reason` and empties the set; with `closing`, members added later are
    /// cancelled at once.
    func cancelAll(reason: CancellationReason, closing: Bool) {
        let cancels = members.withLock { members in
            if closing, members.closedReason == nil {
                members.closedReason = reason
            }
            defer { members.cancels = [:] }
            return members.cancels.values
        }
        for cancel in cancels {
            cancel(reason)
        }
    }
}
