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

/// A sequential reference model of SPEC §5: applies a program's events one by one and predicts every node's
/// outcome and every root's cancel-handler count exactly.
struct ReferenceModel {
    let program: Program
    private(set) var outcomes: [Outcome?]
    private(set) var cancelHandlerRuns: [Int]
    private var bodyRan: [Bool]
    /// For `some`: values in the order they fulfilled.
    private var arrivals: [[Int]]

    init(_ program: Program) {
        self.program = program
        outcomes = Array(repeating: nil, count: program.nodes.count)
        cancelHandlerRuns = Array(repeating: 0, count: program.nodes.count)
        bodyRan = Array(repeating: false, count: program.nodes.count)
        arrivals = Array(repeating: [], count: program.nodes.count)
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
        case .fulfil(let root, let value): resolve(root, .value(value))
        case .reject(let root): resolve(root, .error(root: root))
        case .cancel(let node): cancel(node)
        }
    }

    /// §5.2/§5.3: a pending node is rejected, its handler runs once, and the cancel spreads (§5.5, §5.6);
    /// a resolved node is left alone.
    private mutating func cancel(_ node: Int) {
        guard outcomes[node] == nil else { return }
        outcomes[node] = .cancelled
        if case .root = program.nodes[node] {
            cancelHandlerRuns[node] += 1
        }
        notifyConsumer(of: node)
        switch program.nodes[node] {
        case .then(let parent, let inner):
            cancel(parent)
            if bodyRan[node] { cancel(inner) }
        default:
            for target in program.cancelTargets(of: node) { cancel(target) }
        }
    }

    private mutating func resolve(_ node: Int, _ outcome: Outcome) {
        guard outcomes[node] == nil else { return }
        outcomes[node] = outcome
        notifyConsumer(of: node)
        if case .combine(_, let inputs, true) = program.nodes[node] {
            for input in inputs { cancel(input) }  // §5.6: decided → cancel the inputs still pending
        }
    }

    private mutating func notifyConsumer(of node: Int) {
        guard let consumer = program.consumer(of: node) else { return }
        if case .combine(.some, _, _) = program.nodes[consumer], case .value(let value)? = outcomes[node] {
            arrivals[consumer].append(value)
        }
        evaluate(consumer)
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
            bodyRan[node] = true
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

/// For runs where events race on several threads: the outcomes SPEC §5 allows each node, given what its
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
                case .fulfil(node, let value): allowed.insert(.value(value))
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
