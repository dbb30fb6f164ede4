import TestSupport

/// A random program over cancellable promises: the nodes it builds and the events it then applies.
///
/// A node may have several consumers (branches of shared work). The inputs of one combinator, and a `then`'s
/// parent and inner promise, share no root, so the effects of one event do not depend on the order in which
/// the implementation delivers them, and a sequential reference model can predict them exactly.
struct Program: CustomStringConvertible {
    enum Kind: Equatable {
        /// Work the test controls: fulfilled, rejected or cancelled by events.
        case root
        /// `parent.map { $0 + k }`.
        case map(parent: Int, k: Int)
        /// `parent.recover { _ in .value(100) }` (default policy: cancellation passes through).
        case recover(parent: Int)
        /// `parent.ensure {}`.
        case ensure(parent: Int)
        /// `parent.then { _ in inner }`, where `inner` is a root.
        case then(parent: Int, inner: Int)
        /// A combinator over `inputs`; its result is reduced to an `Int` (see `Combinator`).
        case combine(Combinator, inputs: [Int], autoCancel: Bool)
    }

    enum Combinator: Equatable {
        case when, race, any
        case some(Int)
    }

    enum Event: Equatable {
        case fulfill(root: Int, value: Int)
        case reject(root: Int)
        case cancel(node: Int)
        /// Releases the node's `CancellablePromise` object (a branch nobody holds any more).
        case releaseHolder(node: Int)
    }

    var nodes: [Kind] = []
    var events: [Event] = []

    /// The nodes that consume `node`, in the order they were made.
    func consumers(of node: Int) -> [Int] {
        nodes.indices.filter { inputs(of: $0).contains(node) }
    }

    /// The roots `node` depends on.
    func roots(of node: Int) -> Set<Int> {
        if case .root = nodes[node] { return [node] }
        return inputs(of: node).reduce(into: Set<Int>()) { $0.formUnion(roots(of: $1)) }
    }

    /// The nodes that `then` links return from their bodies: the program never releases them (the body
    /// holds them).
    var innerRoots: Set<Int> {
        Set(
            nodes.compactMap {
                if case .then(_, let inner) = $0 { return inner }
                return nil
            }
        )
    }

    /// The nodes `node` reads from (for `then`: the parent and the inner root).
    func inputs(of node: Int) -> [Int] {
        switch nodes[node] {
        case .root: return []
        case .map(let parent, _), .recover(let parent), .ensure(let parent): return [parent]
        case .then(let parent, let inner): return [parent, inner]
        case .combine(_, let inputs, _): return inputs
        }
    }

    /// The nodes that cancelling `node` cancels in turn (Guarantees, rules 5 and 6).
    func cancelTargets(of node: Int) -> [Int] {
        switch nodes[node] {
        case .root: return []
        case .map(let parent, _), .recover(let parent), .ensure(let parent): return [parent]
        case .then(let parent, let inner): return [parent, inner]
        case .combine(_, let inputs, let autoCancel): return autoCancel ? inputs : []
        }
    }

    var description: String {
        let nodeLines = nodes.enumerated().map { "  n\($0.offset) = \($0.element)" }
        let eventLines = events.map { "  \($0)" }
        return (["nodes:"] + nodeLines + ["events:"] + eventLines).joined(separator: "\n")
    }

    /// A deterministic random program for `seed`.
    static func random(seed: UInt64) -> Program {
        var random = SplitMix64(seed: seed)
        var program = Program()
        let roots = random.next(in: 2...7)
        program.nodes = Array(repeating: .root, count: roots)
        var free = Set(0..<roots)  // nodes without a consumer yet
        var freeRoots = Set(0..<roots)
        for _ in 0..<random.next(in: 1...7) {
            let available = free.sorted()
            switch random.next(in: 0...11) {
            case 0...4 where !available.isEmpty, 10...11 where !available.isEmpty:
                // Mostly a free node; sometimes a branch: a second consumer of a node that already has one.
                let candidates = random.next(in: 0...11) < 3 ? Array(program.nodes.indices) : available
                let parent = candidates[random.next(in: 0...(candidates.count - 1))]
                let kind: Kind
                switch random.next(in: 0...3) {
                case 0: kind = .recover(parent: parent)
                case 1: kind = .ensure(parent: parent)
                case 2:
                    let inners = freeRoots.subtracting([parent]).sorted()
                    if let inner = inners.isEmpty ? nil : inners[random.next(in: 0...(inners.count - 1))] {
                        kind = .then(parent: parent, inner: inner)
                        free.remove(inner)
                        freeRoots.remove(inner)
                    } else {
                        kind = .map(parent: parent, k: random.next(in: 1...9))
                    }
                default: kind = .map(parent: parent, k: random.next(in: 1...9))
                }
                free.remove(parent)
                freeRoots.remove(parent)
                program.nodes.append(kind)
                free.insert(program.nodes.count - 1)
            case 5...9 where available.count >= 2:
                let count = random.next(in: 2...min(4, available.count))
                var pool = available
                var inputs: [Int] = []
                var usedRoots = Set<Int>()
                for _ in 0..<count {
                    let input = pool.remove(at: random.next(in: 0...(pool.count - 1)))
                    let roots = program.roots(of: input)
                    guard roots.isDisjoint(with: usedRoots) else { continue }
                    usedRoots.formUnion(roots)
                    inputs.append(input)
                }
                guard inputs.count >= 2 else { continue }
                let combinator: Combinator
                switch random.next(in: 0...3) {
                case 0: combinator = .when
                case 1: combinator = .race
                case 2: combinator = .any
                default: combinator = .some(random.next(in: 1...inputs.count))
                }
                for input in inputs {
                    free.remove(input)
                    freeRoots.remove(input)
                }
                program.nodes.append(.combine(combinator, inputs: inputs, autoCancel: random.next(in: 0...1) == 1))
                free.insert(program.nodes.count - 1)
            default:
                continue
            }
        }
        // Every root gets one resolving event, so that every node resolves; then some noise: cancels anywhere,
        // and roots resolved a second time.
        for root in 0..<roots {
            switch random.next(in: 0...4) {
            case 0...2: program.events.append(.fulfill(root: root, value: random.next(in: 1...50)))
            case 3: program.events.append(.reject(root: root))
            default: program.events.append(.cancel(node: root))
            }
        }
        for _ in 0..<random.next(in: 0...3) {
            program.events.append(.cancel(node: random.next(in: 0...(program.nodes.count - 1))))
        }
        // Any node but a `then`'s inner root (its body holds it) or a root whose only resolving event is a cancel
        // (an orphaned node cannot be cancelled any more, and every node must resolve).
        let cancelledRoots = Set(
            program.events.compactMap {
                if case .cancel(let node) = $0 { return node }
                return nil
            }
        )
        let releasable = program.nodes.indices.filter {
            !program.innerRoots.contains($0) && !cancelledRoots.contains($0)
        }
        for _ in 0..<random.next(in: 0...3) where !releasable.isEmpty {
            program.events.append(.releaseHolder(node: releasable[random.next(in: 0...(releasable.count - 1))]))
        }
        for _ in 0..<random.next(in: 0...2) {
            let root = random.next(in: 0...(roots - 1))
            program.events.append(
                random.next(in: 0...1) == 0
                    ? .fulfill(root: root, value: random.next(in: 51...99)) : .reject(root: root)
            )
        }
        random.shuffle(&program.events)
        return program
    }
}
