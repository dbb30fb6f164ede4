import PromiseCore
import TestSupport
import Testing

@Suite struct RaceTests {
    @Test func resolvesLikeTheFirstToResolve() {
        let a = Promise<Int>.pending()
        let b = Promise<Int>.pending()
        let winner = race(a.promise, b.promise)
        b.resolver.fulfill(2)
        a.resolver.fulfill(1)
        #expect(winner.value == 2)
    }

    @Test func aRejectionCanWin() {
        let a = Promise<Int>.pending()
        let b = Promise<Int>.pending()
        let winner = race([a.promise, b.promise])
        let error = TestError()
        a.resolver.reject(error)
        b.resolver.fulfill(2)
        #expect(winner.error as? TestError == error)
    }

    @Test func emptyArrayIsBadInput() {
        #expect(race([Promise<Int>]()).error as? PMKError == .badInput)
        #expect(race(fulfilled: [Promise<Int>]()).error as? PMKError == .badInput)
    }

    @Test func guaranteesRace() {
        let (slow, _) = Guarantee<String>.pending()
        let (fast, resolve) = Guarantee<String>.pending()
        let winner = race(slow, fast)
        resolve("fast")
        #expect(winner.value == "fast")
    }

    @Test func fulfilledIgnoresRejections() {
        let a = Promise<Int>.pending()
        let b = Promise<Int>.pending()
        let winner = race(fulfilled: [a.promise, b.promise])
        a.resolver.reject(TestError())
        #expect(winner.isPending)
        b.resolver.fulfill(2)
        #expect(winner.value == 2)
    }

    @Test func fulfilledWithNoFulfilmentRejectsWithNoWinner() {
        let winner = race(fulfilled: [Promise<Int>(error: TestError()), Promise<Int>(error: TestError())])
        #expect(winner.error as? PMKError == .noWinner)
    }
}
