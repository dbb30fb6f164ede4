import Cancellable
import PromiseCore
import TestSupport
import Testing

/// `race`, `when`, `any`, `some` over cancellable promises, with and without `autoCancel`.
@Suite struct CombinatorTests {
    typealias Work = (promise: CancellablePromise<Int>, resolver: Resolver<Int>, cancels: Shared<Int>)

    static func inputs(_ count: Int) -> [Work] {
        (0..<count).map { _ in pendingWork() }
    }

    @Test func raceArrayAndVariadicFormsAreCancellable() {
        let array = Self.inputs(2)
        let winner: CancellablePromise<Int> = race(array.map(\.promise))
        array[0].resolver.fulfill(5)
        #expect(winner.value == 5)
        let variadic = Self.inputs(2)
        let other = race(variadic[0].promise, variadic[1].promise, autoCancel: true)
        variadic[1].resolver.fulfill(6)
        #expect(other.value == 6)
        #expect(variadic[0].cancels.current == 1)
    }

    @Test func tupleFormsAreCancellableAndAutoCancel() {
        let (user, _, userCancels) = pendingWork(String.self)
        let (count, countResolver, _) = pendingWork()
        let both: CancellablePromise<(String, Int)> = when(fulfilled: user, count, autoCancel: true)
        countResolver.reject(TestError())
        #expect(both.isRejected)
        #expect(userCancels.current == 1)

        let inputs = Self.inputs(5)
        let five = when(
            fulfilled: inputs[0].promise,
            inputs[1].promise,
            inputs[2].promise,
            inputs[3].promise,
            inputs[4].promise
        )
        five.cancel()
        #expect(five.isCancelled)
        #expect(inputs.allSatisfy { $0.cancels.current == 0 }, "no autoCancel: inputs keep running")
        let four = when(fulfilled: inputs[0].promise, inputs[1].promise, inputs[2].promise, inputs[3].promise)
        #expect(four.isPending)
    }

    @Test func cancellingAnAutoCancelRaceOrSomeCancelsEveryInput() {
        let raced = Self.inputs(3)
        race(raced.map(\.promise), autoCancel: true).cancel()
        #expect(raced.allSatisfy { $0.cancels.current == 1 })
        let some = Self.inputs(3)
        Cancellable.some(2, some.map(\.promise), autoCancel: true).cancel()
        #expect(some.allSatisfy { $0.cancels.current == 1 })
    }

    @Test func raceOfNothingIsBadInput() {
        #expect(race([CancellablePromise<Int>](), autoCancel: true).error as? PMKError == .badInput)
    }

    @Test func whenFulfilledAutoCancelsTheRestOnTheFirstError() {
        let inputs = Self.inputs(3)
        let all = when(fulfilled: inputs.map(\.promise), autoCancel: true)
        inputs[0].resolver.fulfill(0)
        let error = TestError()
        inputs[1].resolver.reject(error)
        #expect(all.error as? TestError == error)
        #expect(inputs.map { $0.cancels.current } == [0, 0, 1])
    }

    @Test func whenFulfilledValuesInInputOrder() {
        let inputs = Self.inputs(3)
        let all = when(fulfilled: inputs.map(\.promise))
        let tuple = when(fulfilled: inputs[0].promise, inputs[1].promise, inputs[2].promise)
        let variadic = when(fulfilled: inputs[0].promise, inputs[1].promise, inputs[2].promise, autoCancel: false)
        for index in [2, 0, 1] { inputs[index].resolver.fulfill(index) }
        #expect(all.value == [0, 1, 2])
        #expect(tuple.value.map { [$0.0, $0.1, $0.2] } == [0, 1, 2])
        #expect(variadic.value.map { [$0.0, $0.1, $0.2] } == [0, 1, 2])
        #expect(when(fulfilled: [CancellablePromise<Int>]()).value == [])
    }

    @Test func variadicFormServesMoreThanFiveInputs() {
        let inputs = Self.inputs(6)
        let p = inputs.map(\.promise)
        let all: CancellablePromise<[Int]> = when(fulfilled: p[0], p[1], p[2], p[3], p[4], p[5], autoCancel: true)
        inputs[3].resolver.reject(TestError())
        #expect(all.isRejected)
        #expect(inputs.filter { $0.cancels.current == 1 }.count == 5)
    }

    @Test func whenResolvedWaitsForAllAndAutoCancelOnlyOnCancel() {
        let inputs = Self.inputs(2)
        let all = when(resolved: inputs.map(\.promise), autoCancel: true)
        inputs[0].resolver.reject(TestError())
        #expect(all.isPending)
        #expect(inputs[1].cancels.current == 0)
        inputs[1].resolver.fulfill(1)
        #expect(all.value?.map(\.isFulfilled) == [false, true])

        let cancelled = Self.inputs(2)
        let variadic = when(resolved: cancelled[0].promise, cancelled[1].promise, autoCancel: true)
        variadic.cancel()
        #expect(cancelled.allSatisfy { $0.cancels.current == 1 })
    }

    @Test func anyWaitsForEveryInputAndCancelsAllWhenCancelled() {
        let inputs = Self.inputs(2)
        let all = any(inputs.map(\.promise), autoCancel: true)
        inputs[0].resolver.reject(TestError())
        #expect(all.isPending)
        inputs[1].resolver.fulfill(2)
        #expect(all.value?.compactMap(\.value) == [2])

        let cancelled = Self.inputs(2)
        any(cancelled[0].promise, cancelled[1].promise, autoCancel: true).cancel()
        #expect(cancelled.allSatisfy { $0.cancels.current == 1 })
    }

    @Test func someCancelsTheRestOnceEnoughFulfilled() {
        let inputs = Self.inputs(4)
        let two = some(2, inputs.map(\.promise), autoCancel: true)
        inputs[3].resolver.fulfill(3)
        inputs[1].resolver.fulfill(1)
        #expect(two.value == [3, 1])
        #expect(inputs.map { $0.cancels.current } == [1, 0, 1, 0])
        #expect(some(3, Self.inputs(2).map(\.promise)).error as? PMKError == .badInput)
        let variadic = Self.inputs(2)
        #expect(some(1, variadic[0].promise, variadic[1].promise).isPending)
    }

    @Test func autoCancelFanOutOverTenThousandInputs() {
        let inputs = Self.inputs(10_000)
        let winner = race(inputs.map(\.promise), autoCancel: true)
        inputs[5_000].resolver.fulfill(1)
        #expect(winner.value == 1)
        let cancelled = inputs.filter { $0.cancels.current == 1 }.count
        #expect(cancelled == 9_999)
    }

    @Test func plainPromiseCombinatorsStillResolveForPromiseArguments() {
        let promises = [Promise.value(1), Promise.value(2)]
        let all: Promise<[Int]> = when(fulfilled: promises)
        let first: Promise<Int> = race(promises)
        let outcomes: Promise<[Maybe<Int>]> = any(promises)
        #expect(all.value == [1, 2] && first.value == 1 && outcomes.value?.count == 2)
    }
}
