import Cancellable
import PromiseCore
import TestSupport
import Testing

@Suite struct WhenWhileTests {
    @Test func resolvesLikeThePromiseWhileTheConditionHolds() {
        let (work, resolver) = Promise<Int>.pending()
        let (condition, _) = Promise<Void>.pending()
        let result = when(work, while: condition)
        resolver.fulfill(1)
        #expect(result.value == 1)
    }

    @Test func aRejectedConditionRejectsFirst() {
        let (work, resolver) = Promise<Int>.pending()
        let (condition, conditionResolver) = Promise<Void>.pending()
        let result = when(work, while: condition)
        let error = TestError()
        conditionResolver.reject(error)
        #expect(result.error as? TestError == error)
        resolver.fulfill(1)
        #expect(result.error as? TestError == error)
    }

    /// Issue 14, item 5a: as in CancellablePromiseKit, a fulfilled condition never ends the wait, ensured or not.
    @Test func aFulfilledConditionNeverEndsTheWait() async throws {
        let (work, resolver) = Promise<Int>.pending()
        let relaxed = when(work, while: Promise.value)
        let ensured = when(work, while: Promise.value, isEnsured: true)
        #expect(relaxed.isPending)
        #expect(ensured.isPending)
        resolver.fulfill(2)
        #expect(relaxed.value == 2)
        #expect(try await ensured.async() == 2)
    }

    /// Issue 14, item 5b: an ensured condition is checked when the result is delivered (on `conf.Q.map`), so a
    /// condition rejected in the same turn, just after the work fulfilled, still cancels the result. (On the main
    /// actor, so that both happen in one turn of the main queue, where the delivery waits.)
    @MainActor @Test func anEnsuredConditionRejectedJustAfterTheWorkFulfilledCancelsTheResult() async {
        let (work, resolver) = Promise<Int>.pending()
        let (condition, conditionResolver) = Promise<Void>.pending()
        let ensured = when(work, while: condition, isEnsured: true)
        let relaxed = when(work, while: condition)
        resolver.fulfill(1)
        conditionResolver.reject(TestError())
        #expect(relaxed.value == 1)
        await #expect(throws: CancellablePromiseError.cancelled) { try await ensured.async() }
    }

    @Test func anEnsuredConditionThatHoldsDeliversTheValueOrTheError() async throws {
        let (work, resolver) = Promise<Int>.pending()
        let (condition, _) = Promise<Void>.pending()
        let ensured = when(work, while: condition, isEnsured: true)
        resolver.fulfill(3)
        #expect(try await ensured.async() == 3)

        let failing = when(Promise<Int>(error: TestError()), while: condition, isEnsured: true)
        await #expect(throws: TestError.self) { try await failing.async() }
    }

    @Test func autoCancelCancelsTheCancellablePromiseWhenTheConditionEnds() {
        let (work, _, cancels) = pendingWork()
        let (condition, conditionResolver) = Promise<Void>.pending()
        let result = when(work, while: condition, autoCancel: true)
        conditionResolver.reject(TestError())
        #expect(result.isRejected)
        #expect(cancels.current == 1)
        #expect(work.isCancelled)
    }

    @Test func withoutAutoCancelTheCancellablePromiseKeepsRunning() {
        let (work, resolver, cancels) = pendingWork()
        let result = when(work, while: Promise<Void>(error: TestError()))
        #expect(result.isRejected)
        #expect(cancels.current == 0)
        resolver.fulfill(1)
        #expect(work.value == 1)
    }
}
