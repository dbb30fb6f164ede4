import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

/// Issue 8, item 4: `when(fulfilled:concurrently:)` over a generator of cancellable promises.
@Suite struct ConcurrentWhenTests {
    /// A generator of `count` pending promises whose resolvers and cancel reasons the test controls.
    final class Generator: @unchecked Sendable {
        // @unchecked Sendable: everything is behind `Shared`'s lock.
        let pulled = Shared<[(promise: CancellablePromise<Int>, resolver: Resolver<Int>)]>([])
        let reasons = Shared<[Int: CancellationReason]>([:])
        let count: Int

        init(count: Int) {
            self.count = count
        }

        func iterator() -> AnyIterator<CancellablePromise<Int>> {
            AnyIterator { [self] in
                let index = pulled.current.count
                guard index < count else { return nil }
                var captured: Resolver<Int>!
                let promise = CancellablePromise<Int> { resolver in
                    captured = resolver
                    return { reason in self.reasons.withLock { $0[index] = reason } }
                }
                pulled.append((promise, captured))
                return promise
            }
        }

        var pendingCount: Int { pulled.current.filter { $0.promise.isPending }.count }
        func fulfill(_ index: Int) { pulled.current[index].resolver.fulfill(index * 10) }
    }

    @Test func fulfilsInGenerationOrderKeepingAtMostTheLimitInFlight() {
        let generator = Generator(count: 5)
        let all = when(fulfilled: generator.iterator(), concurrently: 2)
        #expect(generator.pulled.current.count == 2)
        generator.fulfill(1)
        #expect(generator.pulled.current.count == 3)
        #expect(generator.pendingCount == 2)
        generator.fulfill(0)
        generator.fulfill(3)
        generator.fulfill(2)
        #expect(generator.pulled.current.count == 5)
        generator.fulfill(4)
        #expect(all.value == [0, 10, 20, 30, 40])
        #expect(generator.reasons.current.isEmpty, "nothing was cancelled")
    }

    @Test func theFirstFailureStopsPullingAndCancelsTheInFlightOnes() {
        let generator = Generator(count: 10)
        let all = when(fulfilled: generator.iterator(), concurrently: 3)
        generator.pulled.current[1].resolver.reject(TestError())
        #expect(all.error is TestError)
        #expect(generator.pulled.current.count == 3, "nothing pulled after the failure")
        #expect(generator.reasons.current == [0: .anotherInputFailed, 2: .anotherInputFailed])
        #expect(generator.pendingCount == 0)
    }

    @Test func cancellingStopsPullingAndCancelsTheInFlightOnesWithItsReason() {
        let generator = Generator(count: 10)
        let all = when(fulfilled: generator.iterator(), concurrently: 3)
        generator.fulfill(0)
        #expect(all.cancel(reason: .superseded))
        #expect(all.cancellationReason == .superseded)
        #expect(generator.pulled.current.count == 4)
        #expect(generator.reasons.current == [1: .superseded, 2: .superseded, 3: .superseded])
        #expect(generator.pendingCount == 0)
    }

    @Test func anInputCancelledOnItsOwnRejectsTheWholeAndCancelsTheRest() {
        let generator = Generator(count: 4)
        let all = when(fulfilled: generator.iterator(), concurrently: 2)
        generator.pulled.current[0].promise.cancel()
        #expect(all.error?.isCancelled == true)
        #expect(generator.reasons.current == [0: .user, 1: .anotherInputFailed])
    }

    @Test func badInputAndEmptyGenerators() {
        let generator = Generator(count: 3)
        let rejected = when(fulfilled: generator.iterator(), concurrently: 0)
        #expect(rejected.error as? PMKError == .badInput)
        #expect(generator.pulled.current.isEmpty, "nothing pulled")
        let empty = when(fulfilled: Generator(count: 0).iterator(), concurrently: 2)
        #expect(empty.value == [])
    }

    @Test func plainPromiseGeneratorsStillGetPromiseCoresForm() {
        let promises = [Promise.value(1), Promise.value(2)]
        let all = when(fulfilled: promises.makeIterator(), concurrently: 1)
        #expect(type(of: all) == Promise<[Int]>.self)
        #expect(all.value == [1, 2])
    }

    /// Cancelling on one thread while another fulfills whatever is in flight: nothing is left pending, every
    /// pulled promise is fulfilled or cancelled (never both), and at most the one pull already under way when
    /// `cancel()` returned happens after it.
    @Test func cancelRacingCompletions() {
        for _ in 0..<500 {
            let generator = Generator(count: 50)
            let all = when(fulfilled: generator.iterator(), concurrently: 3)
            let pulledWhenCancelled = Shared(0)
            runConcurrently(threads: 2) { thread in
                if thread == 0 {
                    all.cancel()
                    pulledWhenCancelled.withLock { $0 = generator.pulled.current.count }
                } else {
                    for index in 0..<50 {
                        guard index < generator.pulled.current.count else { break }
                        generator.fulfill(index)
                    }
                }
            }
            #expect(generator.pendingCount == 0)
            #expect(generator.pulled.current.count <= pulledWhenCancelled.current + 1)
            let reasons = generator.reasons.current
            for (index, pulled) in generator.pulled.current.enumerated() {
                #expect(pulled.promise.isFulfilled != (reasons[index] == .user))
            }
            if all.isFulfilled {
                #expect(all.value?.count == 50)
            } else {
                #expect(all.cancellationReason == .user)
            }
        }
    }
}
