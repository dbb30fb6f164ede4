import PromiseCore
import TestSupport
import Testing

@Suite struct WhenTests {
    @Test func fulfillsWithEveryValueInInputOrder() {
        let pending = (0..<3).map { _ in Promise<Int>.pending() }
        let all = when(fulfilled: pending.map(\.promise))
        pending[2].resolver.fulfill(2)
        pending[0].resolver.fulfill(0)
        #expect(all.isPending)
        pending[1].resolver.fulfill(1)
        #expect(all.value == [0, 1, 2])
    }

    @Test func rejectsWithTheFirstError() {
        let pending = (0..<3).map { _ in Promise<Int>.pending() }
        let all = when(fulfilled: pending.map(\.promise))
        let first = TestError()
        pending[1].resolver.reject(first)
        pending[0].resolver.reject(TestError())
        #expect(all.error as? TestError == first)
    }

    @Test func emptyArrayFulfillsWithEmptyArray() {
        #expect(when(fulfilled: [Promise<Int>]()).value == [])
        #expect(when(resolved: [Promise<Int>]()).value?.isEmpty == true)
        #expect(when(guarantees: [Guarantee<Int>]()).value == [])
    }

    @Test func voidFormsFulfillWithVoid() {
        let all: Promise<Void> = when(fulfilled: [Promise<Void>.value, Promise<Void>.value])
        #expect(all.isFulfilled)
        let variadic: Promise<Void> = when(fulfilled: Promise<Void>.value, Promise<Void>.value)
        #expect(variadic.isFulfilled)
    }

    @Test func heterogeneousFormsFulfillWithTuples() {
        let two = when(fulfilled: Promise.value(1), Promise.value("a"))
        #expect(two.value?.0 == 1 && two.value?.1 == "a")
        let three = when(fulfilled: Promise.value(1), Promise.value("a"), Guarantee.value(true))
        #expect(three.value?.2 == true)
        let four = when(fulfilled: Promise.value(1), Promise.value(2), Promise.value(3), Promise.value(4))
        #expect(four.value.map { $0.0 + $0.1 + $0.2 + $0.3 } == 10)
        let five = when(
            fulfilled: Promise.value(1),
            Promise.value(2),
            Promise.value(3),
            Promise.value(4),
            Promise.value(5)
        )
        #expect(five.value?.4 == 5)
        let error = TestError()
        #expect(when(fulfilled: Promise.value(1), Promise<String>(error: error)).error as? TestError == error)
    }

    @Test func anArrayLiteralOfSameTypedPromisesFulfillsWithTypedValues() {
        let (pending, resolver) = Promise<Int>.pending()
        let all = when(fulfilled: [pending, Promise.value(2)])
        resolver.fulfill(1)
        let values: [Int]? = all.value
        #expect(values == [1, 2])
    }

    @Test func anyThenableArrayFulfillsWithAnyValues() {
        let values = when(fulfilled: [Promise.value(1) as any Thenable, Guarantee.value("a")]).value
        #expect(values?.count == 2)
        #expect(values?[0] as? Int == 1)
        #expect(values?[1] as? String == "a")
    }

    @Test func resolvedWaitsForEveryResult() {
        let (pending, resolver) = Promise<Int>.pending()
        let error = TestError()
        let all = when(resolved: [Promise.value(1), Promise<Int>(error: error), pending])
        #expect(all.isPending)
        resolver.fulfill(3)
        let results = all.value ?? []
        #expect(results.count == 3)
        #expect(results[0].isFulfilled && !results[1].isFulfilled && results[2].isFulfilled)
        #expect(when(resolved: Promise.value(1), Promise.value(2)).value?.count == 2)
    }

    @Test func guaranteeForms() {
        let (pending, resolve) = Guarantee<Int>.pending()
        let all = when(guarantees: [Guarantee.value(1), pending])
        #expect(all.isPending)
        resolve(2)
        #expect(all.value == [1, 2])
        #expect(when(Guarantee.value(1), Guarantee.value(2)).value == [1, 2])
        #expect(when(Guarantee<Void>.value, Guarantee<Void>.value).isFulfilled)
        #expect(when(guarantees: [Guarantee<Void>.value]).isFulfilled)
        let pair = when(guarantees: Guarantee.value(1), Guarantee.value("b"))
        #expect(pair.value?.1 == "b")
        #expect(when(guarantees: Guarantee.value(1), Guarantee.value(2), Guarantee.value(3)).value?.2 == 3)
        let four = when(guarantees: Guarantee.value(1), Guarantee.value(2), Guarantee.value(3), Guarantee.value(4))
        #expect(four.value?.3 == 4)
        let five = when(
            guarantees: Guarantee.value(1),
            Guarantee.value(2),
            Guarantee.value(3),
            Guarantee.value(4),
            Guarantee.value(5)
        )
        #expect(five.value?.4 == 5)
    }

    @Test func inputsKeepRunningAfterARejection() {
        let (slow, resolver) = Promise<Int>.pending()
        let all = when(fulfilled: [Promise<Int>(error: TestError()), slow])
        #expect(all.isRejected)
        resolver.fulfill(1)
        #expect(slow.value == 1)
    }
}
