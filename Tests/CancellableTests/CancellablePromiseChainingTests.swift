import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

@Suite struct CancellablePromiseChainingTests {
    @Test func chainMethodsReturnCancellablePromisesThatTransformValues() {
        nonisolated(unsafe) var seen: [String] = []
        let root = CancellablePromise.value(2)
        let mapped: CancellablePromise<Int> = root.map(on: nil) { $0 * 10 }
        let compacted: CancellablePromise<Int> = mapped.compactMap(on: nil) { $0 > 5 ? $0 + 1 : nil }
        let got: CancellablePromise<Int> = compacted.get(on: nil) { seen.append("get \($0)") }
        let tapped: CancellablePromise<Int> = got.tap(on: nil) { seen.append("tap \($0.isFulfilled)") }
        let done: CancellablePromise<Void> = tapped.done(on: nil) { seen.append("done \($0)") }
        let void: CancellablePromise<Void> = root.asVoid()
        #expect(done.isFulfilled && void.isFulfilled)
        #expect(seen == ["get 21", "tap true", "done 21"])
    }

    @Test func compactMapNilRejects() {
        let rejected = CancellablePromise.value("x").compactMap(on: nil) { Int($0) }
        #expect(rejected.error as? PMKError == .compactMap("x", Int.self))
    }

    @Test func thenFollowsCancellablePromisesPromisesAndGuarantees() {
        let fromCancellable: CancellablePromise<Int> = CancellablePromise.value(1).then(on: nil) { .value($0 + 1) }
        let fromPromise: CancellablePromise<Int> = CancellablePromise.value(1).then(on: nil) { Promise.value($0 + 2) }
        let fromGuarantee: CancellablePromise<Int> = CancellablePromise.value(1).then(on: nil) {
            Guarantee.value($0 + 3)
        }
        #expect(fromCancellable.value == 2)
        #expect(fromPromise.value == 3)
        #expect(fromGuarantee.value == 4)
    }

    @Test func thenReturningItselfRejectsWithReturnedSelf() {
        let (source, resolver) = CancellablePromise<Int>.pending()
        let holder = Shared<CancellablePromise<Int>?>(nil)
        let chained = source.then(on: nil) { _ in holder.current! }
        holder.withLock { $0 = chained }
        resolver.fulfill(1)
        #expect(chained.error as? PMKError == .returnedSelf)
        holder.withLock { $0 = nil }
    }

    @Test func errorsPassThroughValueHandlersAndThrowingRejects() {
        let error = TestError()
        let chained = CancellablePromise<Int>(error: error).map(on: nil) { $0 + 1 }.done(on: nil) { _ in }
        #expect(chained.error as? TestError == error)
        let thrown = CancellablePromise.value(1).map(on: nil) { _ -> Int in throw error }
        #expect(thrown.error as? TestError == error)
    }

    @Test func aBodyWhoseLinkWasCancelledBeforeItRanIsSkipped() async {
        let queue = DispatchQueue(label: "CancellablePromiseChainingTests.skip")
        queue.suspend()
        let ran = Shared(false)
        let shown = CancellablePromise.value(1).done(on: queue) { _ in ran.withLock { $0 = true } }
        shown.cancel()
        queue.resume()
        await withCheckedContinuation { continuation in queue.async { continuation.resume() } }
        #expect(!ran.current, "a done body must not run after the user pressed Stop")
        #expect(shown.isCancelled)
    }

    @Test func firstlyWithACancellableBody() {
        let (promise, _) = CancellablePromise<Int>.pending()
        let started: CancellablePromise<Int> = firstly { promise }
        started.cancel()
        #expect(promise.isCancelled)
        let error = TestError()
        let failed = firstly { () throws -> CancellablePromise<Int> in throw error }
        #expect(failed.error as? TestError == error)
    }

    @Test func sequenceHelpersStillWorkOnCancellablePromises() {
        let values = CancellablePromise.value([3, 1, 2])
        #expect(values.mapValues(on: nil) { $0 * 2 }.value == [6, 2, 4])
        #expect(values.sortedValues(on: nil).value == [1, 2, 3])
        #expect(values.firstValue.value == 3)
    }

    @Test func handlersDefaultToTheMainQueue() async throws {
        let onMain = try await CancellablePromise.value(1).map { _ in isOnMainQueue }.async()
        #expect(onMain)
    }
}
