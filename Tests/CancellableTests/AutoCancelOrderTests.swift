import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

/// Guarantees, rule 10: an `autoCancel` combinator cancels the inputs still pending, and their cancel handlers have
/// run, before its own promise resolves — so no handler of its result (inline, on the main queue, on another
/// queue) runs while a loser is still working. Each round decides the combinator from another thread and checks,
/// in every handler of the result, that every loser's cancel handler has already finished.
@Suite struct AutoCancelOrderTests {
    /// Pending inputs whose cancel handlers count, once finished, how many losers have stopped.
    struct Inputs {
        let promises: [CancellablePromise<Int>]
        let resolvers: [Resolver<Int>]
        /// Cancel handlers that have finished, and the reasons they saw.
        let stopped = Shared<[CancellationReason]>([])

        init(_ count: Int) {
            var resolvers: [Resolver<Int>] = []
            let stopped = self.stopped
            promises = (0..<count).map { _ in
                CancellablePromise<Int> { resolver -> (CancellationReason) -> Void in
                    resolvers.append(resolver)
                    return { reason in stopped.append(reason) }
                }
            }
            self.resolvers = resolvers
        }
    }

    /// Runs `rounds` rounds: `make` builds a combinator over `count` inputs, `decide` decides it on another thread;
    /// every handler of the result must see `losers` cancel handlers finished, each with `reason`.
    func check<T>(
        rounds: Int,
        inputs count: Int,
        losers: Int,
        reason: CancellationReason,
        make: (Inputs) -> CancellablePromise<T>,
        decide: @escaping @Sendable (Inputs, CancellablePromise<T>) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let early = Shared(0)
        let observed = Shared(0)
        for _ in 0..<rounds {
            let inputs = Inputs(count)
            let combined = make(inputs)
            let handlers = DispatchGroup()
            for queue in [nil, DispatchQueue.main, DispatchQueue.global()] {
                handlers.enter()
                _ = combined.ensure(on: queue) {
                    observed.increment()
                    let stopped = inputs.stopped.current
                    if stopped.count != losers || stopped.contains(where: { $0 != reason }) { early.increment() }
                    handlers.leave()
                }
            }
            nonisolated(unsafe) let unsafeCombined = combined
            DispatchQueue.global().async { decide(inputs, unsafeCombined) }
            await withCheckedContinuation { finished in handlers.notify(queue: .global()) { finished.resume() } }
        }
        #expect(observed.current == 3 * rounds, sourceLocation: sourceLocation)
        #expect(early.current == 0, "handlers that ran before every loser stopped", sourceLocation: sourceLocation)
    }

    @Test func raceCancelsEveryLoserBeforeItsResultIsSeen() async {
        await check(rounds: 1_000, inputs: 4, losers: 3, reason: .lostRace) {
            race($0.promises, autoCancel: true)
        } decide: { inputs, _ in
            inputs.resolvers[2].fulfill(2)
        }
    }

    @Test func raceFulfilledCancelsEveryLoserBeforeItsResultIsSeenAndAFailureDecidesNothing() async {
        await check(rounds: 300, inputs: 4, losers: 2, reason: .lostRace) {
            race(fulfilled: $0.promises, autoCancel: true)
        } decide: { inputs, _ in
            inputs.resolvers[0].reject(TestError())  // cancels nobody
            inputs.resolvers[2].fulfill(2)
        }
    }

    @Test func whenFulfilledCancelsTheRestBeforeItRejects() async {
        await check(rounds: 300, inputs: 4, losers: 3, reason: .anotherInputFailed) {
            when(fulfilled: $0.promises, autoCancel: true)
        } decide: { inputs, _ in
            inputs.resolvers[1].reject(TestError())
        }
    }

    @Test func someCancelsTheRestBeforeItFulfills() async {
        await check(rounds: 300, inputs: 4, losers: 3, reason: .lostRace) {
            some(1, $0.promises, autoCancel: true)
        } decide: { inputs, _ in
            inputs.resolvers[0].fulfill(0)
        }
    }

    @Test func aCancelledRaceCancelsEveryInputBeforeItRejects() async {
        await check(rounds: 300, inputs: 4, losers: 4, reason: .superseded) {
            race($0.promises, autoCancel: true)
        } decide: { _, race in
            race.cancel(reason: .superseded)
        }
    }

    @Test func cancelledWhenResolvedAndAnyCancelTheirInputsFirst() async {
        await check(rounds: 300, inputs: 3, losers: 3, reason: .user) {
            when(resolved: $0.promises, autoCancel: true)
        } decide: { _, combined in
            combined.cancel()
        }
        await check(rounds: 300, inputs: 3, losers: 3, reason: .user) {
            any($0.promises, autoCancel: true)
        } decide: { _, combined in
            combined.cancel()
        }
    }

    @Test func concurrentWhenCancelsWhatIsInFlightBeforeItRejects() async {
        await check(rounds: 300, inputs: 4, losers: 3, reason: .anotherInputFailed) { inputs in
            when(fulfilled: inputs.promises.makeIterator(), concurrently: 4)
        } decide: { inputs, _ in
            inputs.resolvers[3].reject(TestError())
        }
        await check(rounds: 300, inputs: 4, losers: 4, reason: .user) { inputs in
            when(fulfilled: inputs.promises.makeIterator(), concurrently: 4)
        } decide: { _, combined in
            combined.cancel()
        }
    }

    /// The race is the only consumer of three inputs; another branch still wants the fourth, which therefore keeps
    /// working (Guarantees, *Shared work*) — and the other three have stopped before the result is seen.
    @Test func aSharedLoserKeepsWorkingAndTheOthersStopFirst() async {
        let branches = Shared<[CancellablePromise<Int>]>([])
        await check(rounds: 300, inputs: 5, losers: 3, reason: .lostRace) { inputs in
            branches.append(inputs.promises[4].map(on: nil) { $0 })
            return race(inputs.promises, autoCancel: true)
        } decide: { inputs, _ in
            inputs.resolvers[0].fulfill(0)
        }
        #expect(branches.current.allSatisfy { $0.isPending })
    }

    /// `when(_:while:autoCancel:)`: the condition ending the wait cancels the work before the result rejects.
    @Test func anEndedConditionCancelsTheWorkBeforeTheResultRejects() async {
        let early = Shared(0)
        for _ in 0..<300 {
            let inputs = Inputs(1)
            let (condition, ended) = Promise<Void>.pending()
            let handlers = DispatchGroup()
            handlers.enter()
            when(inputs.promises[0], while: condition, autoCancel: true).ensure(on: .main) {
                if inputs.stopped.current != [.user] { early.increment() }
                handlers.leave()
            }.cauterize()
            DispatchQueue.global().async { ended.reject(CancellablePromiseError(reason: .user)) }
            await withCheckedContinuation { finished in handlers.notify(queue: .global()) { finished.resume() } }
        }
        #expect(early.current == 0)
    }
}
