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

    @Test func aFulfilledConditionIsIgnoredUnlessEnsured() {
        let (work, resolver) = Promise<Int>.pending()
        let relaxed = when(work, while: Promise.value)
        #expect(relaxed.isPending)
        let ensured = when(work, while: Promise.value, isEnsured: true)
        #expect(ensured.error as? CancellablePromiseError == .cancelled)
        resolver.fulfill(2)
        #expect(relaxed.value == 2)
    }

    @Test func autoCancelCancelsTheCancellablePromiseWhenTheConditionEnds() {
        let (work, _, cancels) = CancellationSemanticsTests.work()
        let (condition, conditionResolver) = Promise<Void>.pending()
        let result = when(work, while: condition, autoCancel: true)
        conditionResolver.reject(TestError())
        #expect(result.isRejected)
        #expect(cancels.current == 1)
        #expect(work.isCancelled)
    }

    @Test func withoutAutoCancelTheCancellablePromiseKeepsRunning() {
        let (work, resolver, cancels) = CancellationSemanticsTests.work()
        let result = when(work, while: Promise<Void>(error: TestError()))
        #expect(result.isRejected)
        #expect(cancels.current == 0)
        resolver.fulfill(1)
        #expect(work.value == 1)
    }
}
