import Dispatch
import PromiseCore
import TestSupport
import Testing

@Suite struct ThenableTests {
    @Test func thenFollowsThePromiseTheBodyReturns() {
        let (inner, resolver) = Promise<String>.pending()
        let chained = Promise.value(1).then(on: nil) { _ in inner }
        #expect(chained.isPending)
        resolver.fulfill("x")
        #expect(chained.value == "x")
    }

    @Test func thenBodyThrowingRejects() {
        let error = TestError()
        let chained = Promise.value(1).then(on: nil) { _ -> Promise<Int> in throw error }
        #expect(chained.error as? TestError == error)
    }

    @Test func rejectionSkipsFulfilmentHandlers() {
        nonisolated(unsafe) var called = false
        let error = TestError()
        let chained = Promise<Int>(error: error).map(on: nil) { _ in called = true }
        #expect(!called)
        #expect(chained.error as? TestError == error)
    }

    @Test func mapTransformsAndThrowingRejects() {
        #expect(Promise.value(2).map(on: nil) { $0 * 3 }.value == 6)
        let error = TestError()
        #expect(Promise.value(2).map(on: nil) { _ -> Int in throw error }.error as? TestError == error)
    }

    @Test func compactMapNilRejectsWithCompactMapError() {
        #expect(Promise.value("12").compactMap(on: nil) { Int($0) }.value == 12)
        let rejected = Promise.value("x").compactMap(on: nil) { Int($0) }
        guard case .compactMap(let value, let type)? = rejected.error as? PMKError else {
            Issue.record("expected PMKError.compactMap, got \(String(describing: rejected.error))")
            return
        }
        #expect(value as? String == "x")
        #expect(ObjectIdentifier(type) == ObjectIdentifier(Int.self))
    }

    @Test func doneConsumesAndGetPassesThrough() {
        nonisolated(unsafe) var seen: [Int] = []
        let got = Promise.value(4).get(on: nil) { seen.append($0) }
        #expect(got.value == 4)
        let done = got.done(on: nil) { seen.append($0 + 1) }
        #expect(done.isFulfilled)
        #expect(seen == [4, 5])
        let error = TestError()
        #expect(Promise.value(1).get(on: nil) { _ in throw error }.error as? TestError == error)
        #expect(Promise.value(1).done(on: nil) { _ in throw error }.error as? TestError == error)
    }

    @Test func tapSeesTheResultAndPassesItOn() {
        nonisolated(unsafe) var seen: [String] = []
        let error = TestError()
        let fulfilled = Promise.value(1).tap(on: nil) { seen.append("\($0.isFulfilled)") }
        let rejected = Promise<Int>(error: error).tap(on: nil) { seen.append("\($0.isFulfilled)") }
        #expect(seen == ["true", "false"])
        #expect(fulfilled.value == 1)
        #expect(rejected.error as? TestError == error)
    }

    @Test func asVoidDiscardsTheValue() {
        #expect(Promise.value(1).asVoid().isFulfilled)
        #expect(Promise<Int>(error: TestError()).asVoid().isRejected)
    }

    @Test func asResultTurnsFailureIntoAValue() {
        let error = TestError()
        let result = Promise<Int>(error: error).asResult().value
        guard case .failure(let failure)? = result else {
            Issue.record("expected a failure")
            return
        }
        #expect(failure as? TestError == error)
        #expect((try? Promise.value(1).asResult().value?.get()) == 1)
    }

    @Test func handlersRunInTheOrderTheyWereAdded() {
        let (promise, resolver) = Promise<Int>.pending()
        nonisolated(unsafe) var order: [Int] = []
        for index in 0..<10 {
            _ = promise.done(on: nil) { _ in order.append(index) }
        }
        resolver.fulfill(0)
        #expect(order == Array(0..<10))
    }

    @Test func handlersOnAQueueRunInTheOrderTheyWereAdded() async throws {
        let (promise, resolver) = Promise<Int>.pending()
        let order = Shared<[Int]>([])
        let all = (0..<50).map { index in promise.done(on: backgroundQueue) { _ in order.append(index) } }
        resolver.fulfill(0)
        try await when(fulfilled: all).async()
        #expect(order.current == Array(0..<50))
    }

    @Test func onNilRunsInlineOnTheResolvingThread() {
        let (promise, resolver) = Promise<Int>.pending()
        nonisolated(unsafe) var ran = false
        _ = promise.done(on: nil) { _ in ran = true }
        #expect(!ran)
        resolver.fulfill(1)
        #expect(ran)
    }

    @Test func userResolutionInsideAnInlineHandlerRunsItsHandlersSynchronously() {
        nonisolated(unsafe) var trace: [String] = []
        _ = Promise.value(1).done(on: nil) { _ in
            let (inner, resolver) = Promise<Int>.pending()
            _ = inner.map(on: nil) { $0 + 1 }.done(on: nil) { trace.append("inner \($0)") }
            resolver.fulfill(1)
            trace.append("after fulfill")
        }
        #expect(trace == ["inner 2", "after fulfill"])
    }

    @Test func handlersRunOnTheQueueTheyAreGiven() async throws {
        _ = configureBackgroundQueue
        let onQueue = try await Promise.value(1).map(on: backgroundQueue) { _ in isOnBackground }.async()
        #expect(onQueue)
    }

    @Test func handlersDefaultToTheMainQueue() async throws {
        let mapOnMain = try await Promise.value(1).map { _ in isOnMainQueue }.async()
        #expect(mapOnMain)
        let flag = Shared(false)
        try await Promise.value(1).done { _ in flag.withLock { $0 = isOnMainQueue } }.async()
        #expect(flag.current)
    }

    @Test func flagsArePassedToTheQueue() async throws {
        let value = try await Promise.value(1).map(on: .global(), flags: .barrier) { $0 + 1 }.async()
        #expect(value == 2)
    }

    @Test func inspectionReflectsTheState() {
        let (promise, resolver) = Promise<Int>.pending()
        #expect(promise.isPending && !promise.isResolved && promise.value == nil && promise.error == nil)
        #expect(promise.result == nil)
        let error = TestError()
        resolver.reject(error)
        #expect(promise.isRejected && !promise.isFulfilled && promise.isResolved)
        #expect(promise.error as? TestError == error)
    }
}
