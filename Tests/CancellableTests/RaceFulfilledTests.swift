import Cancellable
import PromiseCore
import TestSupport
import Testing

/// `race(fulfilled:autoCancel:)`: the first *success* wins; a failure leaves the rest running; the losers are
/// cancelled before the race fulfills; it rejects only once every input has failed, saying why each did.
@Suite struct RaceFulfilledTests {
    typealias Work = CombinatorTests.Work

    @Test func aFailureDoesNotDecideTheRaceAndTheFirstSuccessWins() {
        let mirrors = CombinatorTests.inputs(3)
        let fastest = race(fulfilled: mirrors.map(\.promise), autoCancel: true)
        mirrors[0].resolver.reject(TestError())  // a mirror whose connection was cut
        #expect(fastest.isPending, "a failure does not end the race")
        #expect(mirrors.map { $0.cancels.current } == [0, 0, 0], "nor cancel the healthy mirrors")
        mirrors[2].resolver.fulfill(7)
        #expect(fastest.value == 7)
        #expect(mirrors.map { $0.cancels.current } == [0, 1, 0], "the loser still running was cancelled")
    }

    @Test func theLosersAreCancelledForLosingBeforeTheRaceFulfills() {
        let loser = pendingWorkRecordingReasons()
        let winner = pendingWorkRecordingReasons()
        let seenByTheWinnersHandler = Shared<[CancellationReason]?>(nil)
        race(fulfilled: [loser.promise, winner.promise], autoCancel: true).done(on: nil) { _ in
            seenByTheWinnersHandler.withLock { $0 = loser.reasons.current }
        }.cauterize()
        winner.resolver.fulfill(1)
        #expect(seenByTheWinnersHandler.current == [.lostRace])
        #expect(winner.reasons.current.isEmpty)
    }

    @Test func whenEveryInputFailsTheRaceRejectsWithEachError() {
        let mirrors = CombinatorTests.inputs(3)
        let fastest = race(fulfilled: mirrors.map(\.promise), autoCancel: true)
        let errors = [TestError(), TestError(), TestError()]
        for index in [2, 0, 1] { mirrors[index].resolver.reject(errors[index]) }
        let aggregate = fastest.error as? AggregateError
        #expect(aggregate?.required == 1)
        #expect(aggregate?.errors.compactMap { $0 as? TestError } == [errors[2], errors[0], errors[1]])
        #expect(mirrors.allSatisfy { $0.cancels.current == 0 }, "nothing was left to cancel")
    }

    @Test func cancellingTheRaceCancelsEveryInputWithItsReason() {
        let mirrors = (0..<3).map { _ in pendingWorkRecordingReasons() }
        let fastest = race(fulfilled: mirrors.map(\.promise), autoCancel: true)
        mirrors[0].resolver.reject(TestError())
        #expect(fastest.cancel(reason: .timeout))
        #expect(fastest.cancellationReason == .timeout)
        #expect(mirrors.map(\.reasons.current) == [[], [.timeout], [.timeout]])
    }

    @Test func withoutAutoCancelTheInputsKeepRunning() {
        let array = CombinatorTests.inputs(2)
        let first = race(fulfilled: array.map(\.promise))
        array[1].resolver.fulfill(3)
        #expect(first.value == 3)
        let variadic = CombinatorTests.inputs(2)
        let other = race(fulfilled: variadic[0].promise, variadic[1].promise)
        variadic[0].resolver.reject(TestError())
        variadic[1].resolver.fulfill(4)
        #expect(other.value == 4)
        #expect((array + variadic).allSatisfy { $0.cancels.current == 0 })
        let both = CombinatorTests.inputs(2)
        let auto = race(fulfilled: both[0].promise, both[1].promise, autoCancel: true)
        both[0].resolver.fulfill(5)
        #expect(auto.value == 5 && both[1].cancels.current == 1)
    }

    @Test func aRaceOfNothingIsBadInput() {
        #expect(race(fulfilled: [CancellablePromise<Int>](), autoCancel: true).error as? PMKError == .badInput)
        #expect(race(fulfilled: [CancellablePromise<Int>]()).error as? PMKError == .badInput)
    }

    @Test func plainPromisesStillGetPromiseKitsRaceWhichRejectsWithNoWinner() {
        let (a, resolveA) = Promise<Int>.pending()
        let (b, resolveB) = Promise<Int>.pending()
        let plain: Promise<Int> = race(fulfilled: [a, b])
        resolveA.reject(TestError())
        resolveB.reject(TestError())
        #expect(plain.error as? PMKError == .noWinner)
    }
}
