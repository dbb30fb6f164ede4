import Cancellable
import Foundation
import PromiseCore
import TestSupport
import Testing

/// Random programs of create / chain / combine / fulfill / reject / cancel, run against the real
/// implementation and checked against `ReferenceModel` (sequential runs: exact outcomes) or `AllowedOutcomes`
/// (runs whose events race on several threads).
///
/// Seeds are deterministic; a failure names its seed and program. Environment:
/// `PROMISECORE_MODEL_SEED=N` replays one seed; `PROMISECORE_SOAK=K` runs K times as many programs.
@Suite struct ModelBasedTests {
    static let soak = Int(ProcessInfo.processInfo.environment["PROMISECORE_SOAK"] ?? "") ?? 1
    static let replay = ProcessInfo.processInfo.environment["PROMISECORE_MODEL_SEED"].flatMap(UInt64.init)
    static let sequentialPrograms = 3_000
    static let concurrentPrograms = 1_000

    static func seeds(_ count: Int, offset: UInt64) -> [UInt64] {
        if let replay { return [replay] }
        return (0..<UInt64(count * soak)).map { offset + $0 }
    }

    /// The programs run on a thread of their own, not on one of the cooperative pool's, which other tests' tasks
    /// need; each test records the first disagreement they find.
    @Test func sequentialProgramsMatchTheReferenceModelExactly() async {
        let disagreement = await onAThreadOfItsOwn { () -> String? in
            for seed in Self.seeds(Self.sequentialPrograms, offset: 1) {
                let program = Program.random(seed: seed)
                let run = RealRun(program)
                for event in program.events {
                    run.apply(event)
                }
                let model = ReferenceModel.run(program)
                let actual = run.outcomes()
                guard actual == model.outcomes, run.cancelHandlerRuns == model.cancelHandlerRuns else {
                    return """
                        seed \(seed): implementation and model disagree
                        \(program)
                        outcomes:     \(actual.map { $0?.description ?? "pending" })
                        model:        \(model.outcomes.map { $0?.description ?? "pending" })
                        cancels:      \(run.cancelHandlerRuns)
                        model cancels: \(model.cancelHandlerRuns)
                        """
                }
                if let broken = run.brokenInvariant(seed: seed) { return broken }
            }
            return nil
        }
        if let disagreement { Issue.record(Comment(rawValue: disagreement)) }
    }

    @Test func concurrentProgramsStayWithinWhatTheModelAllows() async {
        let disagreement = await onAThreadOfItsOwn { () -> String? in
            for seed in Self.seeds(Self.concurrentPrograms, offset: 1_000_000) {
                let program = Program.random(seed: seed)
                let run = RealRun(program)
                let threads = 3
                runConcurrently(threads: threads) { thread in
                    for (index, event) in program.events.enumerated() where index % threads == thread {
                        run.apply(event)
                    }
                }
                if let broken = run.brokenInvariant(seed: seed) { return broken }
                let actual = run.outcomes().map { $0! }
                let allowed = AllowedOutcomes(program)
                for node in program.nodes.indices where !allowed.allowed(node, given: actual).contains(actual[node]) {
                    return """
                        seed \(seed): n\(node) ended as \(actual[node]), the model allows \
                        \(allowed.allowed(node, given: actual))
                        \(program)
                        outcomes: \(actual)
                        """
                }
            }
            return nil
        }
        if let disagreement { Issue.record(Comment(rawValue: disagreement)) }
    }
}

/// The real implementation running a `Program`.
final class RealRun: @unchecked Sendable {
    // @unchecked Sendable: `boxes` and `resolvers` are written only while building, before any thread starts;
    // the held objects and the counters are `Shared`.
    let program: Program
    /// The nodes' objects, until a `releaseHolder` event releases one.
    private var held: [Shared<CancellablePromise<Int>?>] = []
    /// The nodes' promises, to read outcomes: holding them does not make a node cancellable.
    private var boxes: [Promise<Int>] = []
    private var resolvers: [Int: Resolver<Int>] = [:]
    private let cancelCounts: [Shared<Int>]
    private let observerCounts: [Shared<Int>]

    init(_ program: Program) {
        self.program = program
        cancelCounts = program.nodes.map { _ in Shared(0) }
        observerCounts = program.nodes.map { _ in Shared(0) }
        var nodes: [CancellablePromise<Int>] = []
        for (index, kind) in program.nodes.enumerated() {
            nodes.append(build(index, kind, nodes))
        }
        for (index, node) in nodes.enumerated() {
            let count = observerCounts[index]
            node.pipe { _ in count.increment() }
        }
        boxes = nodes.map { $0.asPromise() }
        held = nodes.map { Shared($0) }
    }

    private func build(
        _ index: Int,
        _ kind: Program.Kind,
        _ nodes: [CancellablePromise<Int>]
    ) -> CancellablePromise<Int> {
        switch kind {
        case .root:
            let cancels = cancelCounts[index]
            return CancellablePromise<Int> { resolver in
                resolvers[index] = resolver
                return { cancels.increment() }
            }
        case .map(let parent, let k):
            return nodes[parent].map(on: nil) { $0 + k }
        case .recover(let parent):
            return nodes[parent].recover(on: nil) { _ in Promise.value(100) }
        case .ensure(let parent):
            return nodes[parent].ensure(on: nil) {}
        case .then(let parent, let inner):
            let innerPromise = nodes[inner]
            return nodes[parent].then(on: nil) { _ in innerPromise }
        case .combine(let combinator, let inputs, let autoCancel):
            let promises = inputs.map { nodes[$0] }
            switch combinator {
            case .when:
                return when(fulfilled: promises, autoCancel: autoCancel).map(on: nil) { $0.reduce(0, +) }
            case .race:
                return race(promises, autoCancel: autoCancel)
            case .any:
                return any(promises, autoCancel: autoCancel).map(on: nil) { $0.compactMap(\.value).reduce(0, +) }
            case .some(let count):
                return some(count, promises, autoCancel: autoCancel).map(on: nil) { $0.reduce(0, +) }
            }
        }
    }

    func apply(_ event: Program.Event) {
        switch event {
        case .fulfill(let root, let value): resolvers[root]!.fulfill(value)
        case .reject(let root): resolvers[root]!.reject(ModelError(root: root))
        case .cancel(let node): held[node].current?.cancel()
        case .releaseHolder(let node):
            _ = held[node].take()  // released here, outside the lock
        }
    }

    var cancelHandlerRuns: [Int] { cancelCounts.map(\.current) }

    func outcomes() -> [Outcome?] {
        boxes.map { node in
            switch node.result {
            case nil: return nil
            case .fulfilled(let value)?: return .value(value)
            case .rejected(let error)?:
                if error.isCancelled { return .cancelled }
                if let error = error as? ModelError { return .error(root: error.root) }
                if error is AllPromisesFailedError<Int> { return .allFailed }
                if error is AggregateError { return .tooFewFulfilled }
                return .error(root: -1)
            }
        }
    }

    /// What is wrong with the run once every event was applied — a node never resolved, an observer that did not
    /// run exactly once, a root whose cancel handler ran other than once if cancelled — or `nil`.
    func brokenInvariant(seed: UInt64) -> String? {
        let outcomes = outcomes()
        for node in program.nodes.indices {
            guard let outcome = outcomes[node] else {
                return "seed \(seed): n\(node) never resolved\n\(program)"
            }
            guard observerCounts[node].current == 1 else {
                return "seed \(seed): n\(node)'s observer ran \(observerCounts[node].current) times\n\(program)"
            }
            if case .root = program.nodes[node], cancelCounts[node].current != (outcome == .cancelled ? 1 : 0) {
                let runs = cancelCounts[node].current
                return "seed \(seed): root n\(node) is \(outcome) but its cancel handler ran \(runs) times\n\(program)"
            }
        }
        return nil
    }
}

struct ModelError: Error, Equatable {
    let root: Int
}
