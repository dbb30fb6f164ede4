/// What a node ended as, in the model's terms.
enum Outcome: Hashable, CustomStringConvertible {
    case value(Int)
    /// Rejected by `reject(root:)` of this root.
    case error(root: Int)
    /// Rejected with `AllPromisesFailedError` (`any`).
    case allFailed
    /// Rejected with `AggregateError` (`some`).
    case tooFewFulfilled
    /// Rejected by a cancellation (its own `cancel()` or one that reached it).
    case cancelled

    var isValue: Bool {
        if case .value = self { return true }
        return false
    }

    var description: String {
        switch self {
        case .value(let value): return "value(\(value))"
        case .error(let root): return "error(n\(root))"
        case .allFailed: return "allFailed"
        case .tooFewFulfilled: return "tooFewFulfilled"
        case .cancelled: return "cancelled"
        }
    }
}

/// A sequential reference model of the Guarantees rules: applies a program's events one by one and predicts every
/// node's
/// outcome and every root's cancel-handler count exactly.
///
/// Shared work (issue 14, item 8): every consumer that can cancel a node — a link, a `then` that follows it, an
/// `autoCancel` combinator — has a vote on it. A cast vote counts as cancelled; a node is cancelled through its
/// consumers once no vote is outstanding and at least one was cast. A vote is withdrawn when its consumer
/// resolves, or when nobody can cancel the consumer any more (its object released and no vote on it
/// outstanding: it is orphaned); an orphaned `autoCancel` combinator keeps its votes.
struct ReferenceModel {
    let program: Program
    private(set) var outcomes: [Outcome?]
    private(set) var cancelHandlerRuns: [Int]
    private var bodyRan: [Bool]
    /// For `some`: values in the order they fulfilled.
    private var arrivals: [[Int]]
    /// Whether the node's object is still held (no `releaseHolder` event yet).
    private var held: [Bool]
    /// Votes on each node that are neither cast nor withdrawn.
    private var openVotes: [Int]
    /// Whether a vote on the node was cast while others remained.
    private var voteCast: [Bool]
    /// Each node's votes on other nodes, in the order they were made, until cast or withdrawn.
    private var votes: [[Int]]

    init(_ program: Program) {
        self.program = program
        let count = program.nodes.count
        outcomes = Array(repeating: nil, count: count)
        cancelHandlerRuns = Array(repeating: 0, count: count)
        bodyRan = Array(repeating: false, count: count)
        arrivals = Array(repeating: [], count: count)
        held = Array(repeating: true, count: count)
        openVotes = Array(repeating: 0, count: count)
        voteCast = Array(repeating: false, count: count)
        votes = Array(repeating: [], count: count)
        for node in program.nodes.indices {
            switch program.nodes[node] {
            case .root: break
            case .map(let parent, _), .recover(let parent), .ensure(let parent), .then(let parent, _):
                addVote(from: node, on: parent)
            case .combine(_, let inputs, let autoCancel):
                if autoCancel {
                    for input in inputs { addVote(from: node, on: input) }
                }
            }
        }
    }

    static func run(_ program: Program) -> ReferenceModel {
        var model = ReferenceModel(program)
        for event in program.events {
            model.apply(event)
        }
        return model
    }

    mutating func apply(_ event: Program.Event) {
        switch event {
        case .fulfill(let root, let value): resolve(root, .value(value))
        case .reject(let root): resolve(root, .error(root: root))
        case .cancel(let node): if held[node] { cancel(node) }
        case .releaseHolder(let node): releaseHolder(node)
        }
    }

    private func isOrphaned(_ node: Int) -> Bool {
        outcomes[node] == nil && !held[node] && openVotes[node] == 0
    }

    private func isAutoCancelCombinator(_ node: Int) -> Bool {
        if case .combine(_, _, true) = program.nodes[node] { return true }
        return false
    }

    /// A vote counts only on a pending node.
    private mutating func addVote(from consumer: Int, on target: Int) {
        guard outcomes[target] == nil else { return }
        openVotes[target] += 1
        votes[consumer].append(target)
    }

    private mutating func takeVote(from consumer: Int, on target: Int) -> Bool {
        guard let index = votes[consumer].firstIndex(of: target) else { return false }
        votes[consumer].remove(at: index)
        return true
    }

    private mutating func cast(from consumer: Int, on target: Int) {
        guard takeVote(from: consumer, on: target), outcomes[target] == nil else { return }
        openVotes[target] -= 1
        if openVotes[target] == 0 {
            cancel(target)
        } else {
            voteCast[target] = true
        }
    }

    private mutating func withdraw(from consumer: Int, on target: Int) {
        guard takeVote(from: consumer, on: target), outcomes[target] == nil else { return }
        openVotes[target] -= 1
        guard openVotes[target] == 0 else { return }
        if voteCast[target] {
            cancel(target)
        } else if !held[target] {
            orphan(target)
        }
    }

    /// Nobody can cancel `node` any more: it withdraws its votes (an `autoCancel` combinator keeps them).
    private mutating func orphan(_ node: Int) {
        guard !isAutoCancelCombinator(node) else { return }
        for target in votes[node] { withdraw(from: node, on: target) }
    }

    private mutating func releaseHolder(_ node: Int) {
        guard held[node] else { return }
        held[node] = false
        if isOrphaned(node) { orphan(node) }
    }

    /// Rules 2 and 3: a pending node is rejected, its handler runs once, and the cancel spreads through its votes
    /// (rules 5 and 6); a resolved node is left alone.
    private mutating func cancel(_ node: Int) {
        guard outcomes[node] == nil else { return }
        outcomes[node] = .cancelled
        if case .root = program.nodes[node] {
            cancelHandlerRuns[node] += 1
        }
        notifyConsumers(of: node)
        for target in votes[node] { cast(from: node, on: target) }
    }

    private mutating func resolve(_ node: Int, _ outcome: Outcome) {
        guard outcomes[node] == nil else { return }
        outcomes[node] = outcome
        notifyConsumers(of: node)
        // Rule 6: a decided autoCancel combinator cancels the inputs still pending; any other node's votes are
        // withdrawn (its inputs have resolved).
        let autoCancel = isAutoCancelCombinator(node)
        for target in votes[node] {
            if autoCancel { cast(from: node, on: target) } else { withdraw(from: node, on: target) }
        }
    }

    private mutating func notifyConsumers(of node: Int) {
        for consumer in program.consumers(of: node) {
            if case .combine(.some, _, _) = program.nodes[consumer], case .value(let value)? = outcomes[node] {
                arrivals[consumer].append(value)
            }
            evaluate(consumer)
        }
    }

    /// Re-evaluates a pending node after one of its inputs resolved.
    private mutating func evaluate(_ node: Int) {
        guard outcomes[node] == nil else { return }
        switch program.nodes[node] {
        case .root:
            return
        case .map(let parent, let k):
            guard let input = outcomes[parent] else { return }
            resolve(node, input.mapValue { .value($0 + k) })
        case .recover(let parent):
            guard let input = outcomes[parent] else { return }
            switch input {
            case .value, .cancelled: resolve(node, input)
            case .error, .allFailed, .tooFewFulfilled: resolve(node, .value(100))
            }
        case .ensure(let parent):
            guard let input = outcomes[parent] else { return }
            resolve(node, input)
        case .then(let parent, let inner):
            guard let input = outcomes[parent] else { return }
            guard input.isValue else {
                resolve(node, input)
                return
            }
            if !bodyRan[node] {
                bodyRan[node] = true
                // The link follows the promise its body returned: a vote on it, withdrawn at once if nobody can
                // cancel the link any more.
                addVote(from: node, on: inner)
                if isOrphaned(node) { withdraw(from: node, on: inner) }
            }
            if let result = outcomes[inner] {
                resolve(node, result)
            }
        case .combine(let combinator, let inputs, _):
            let results = inputs.map { outcomes[$0] }
            switch combinator {
            case .when:
                if let failure = results.compactMap({ $0 }).first(where: { !$0.isValue }) {
                    resolve(node, failure)
                } else if results.allSatisfy({ $0 != nil }) {
                    resolve(node, .value(results.reduce(0) { $0 + ($1?.value ?? 0) }))
                }
            case .race:
                if let first = results.compactMap({ $0 }).first {
                    resolve(node, first)
                }
            case .any:
                guard results.allSatisfy({ $0 != nil }) else { return }
                let values = results.compactMap { $0?.value }
                resolve(node, values.isEmpty ? .allFailed : .value(values.reduce(0, +)))
            case .some(let count):
                let failures = results.filter { $0 != nil && !$0!.isValue }.count
                if arrivals[node].count >= count {
                    resolve(node, .value(arrivals[node].prefix(count).reduce(0, +)))
                } else if inputs.count - failures < count {
                    resolve(node, .tooFewFulfilled)
                }
            }
        }
    }
}

extension Outcome {
    var value: Int? {
        if case .value(let value) = self { return value }
        return nil
    }

    func mapValue(_ transform: (Int) -> Outcome) -> Outcome {
        if case .value(let value) = self { return transform(value) }
        return self
    }
}

/// For runs where events race on several threads: the outcomes the Guarantees rules allow each node, given what its
/// inputs actually ended as.
struct AllowedOutcomes {
    let program: Program
    /// Nodes that some cancel could reach: the targets of cancel events, the inputs of `autoCancel`
    /// combinators (cancelled once the outcome is decided), and everything those cancel in turn.
    let cancellable: Set<Int>

    init(_ program: Program) {
        self.program = program
        var reachable = Set<Int>()
        var pending: [Int] = program.events.compactMap {
            if case .cancel(let node) = $0 { return node }
            return nil
        }
        for node in program.nodes.indices {
            if case .combine(_, let inputs, true) = program.nodes[node] { pending += inputs }
        }
        while let node = pending.popLast() {
            guard reachable.insert(node).inserted else { continue }
            pending += program.cancelTargets(of: node)
        }
        cancellable = reachable
    }

    func allowed(_ node: Int, given actual: [Outcome]) -> Set<Outcome> {
        var allowed: Set<Outcome> = cancellable.contains(node) ? [.cancelled] : []
        switch program.nodes[node] {
        case .root:
            for event in program.events {
                switch event {
                case .fulfill(node, let value): allowed.insert(.value(value))
                case .reject(node): allowed.insert(.error(root: node))
                default: break
                }
            }
        case .map(let parent, let k):
            allowed.insert(actual[parent].mapValue { .value($0 + k) })
        case .recover(let parent):
            switch actual[parent] {
            case .value, .cancelled: allowed.insert(actual[parent])
            case .error, .allFailed, .tooFewFulfilled: allowed.insert(.value(100))
            }
        case .ensure(let parent):
            allowed.insert(actual[parent])
        case .then(let parent, let inner):
            allowed.insert(actual[parent].isValue ? actual[inner] : actual[parent])
        case .combine(let combinator, let inputs, _):
            let results = inputs.map { actual[$0] }
            let values = results.compactMap(\.value)
            switch combinator {
            case .when:
                if values.count == results.count {
                    allowed.insert(.value(values.reduce(0, +)))
                } else {
                    allowed.formUnion(results.filter { !$0.isValue })
                }
            case .race:
                allowed.formUnion(results)
            case .any:
                allowed.insert(values.isEmpty ? .allFailed : .value(values.reduce(0, +)))
            case .some(let count):
                if values.count >= count {
                    allowed.formUnion(sumsOfSubsets(values, size: count).map { .value($0) })
                }
                if results.count - values.count > results.count - count {
                    allowed.insert(.tooFewFulfilled)
                }
            }
        }
        return allowed
    }

    private func sumsOfSubsets(_ values: [Int], size: Int) -> Set<Int> {
        guard size > 0 else { return [0] }
        guard values.count >= size, let first = values.first else { return [] }
        let rest = Array(values.dropFirst())
        return Set(sumsOfSubsets(rest, size: size - 1).map { $0 + first }).union(sumsOfSubsets(rest, size: size))
    }
}
