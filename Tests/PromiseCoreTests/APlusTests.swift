import Dispatch
import PromiseCore
import TestSupport
import Testing

/// The Promises/A+ clauses that apply to a typed Swift API, one test each.
///
/// Clauses about JavaScript's dynamic typing (2.2.1 optional arguments, 2.2.5 `this`, 2.3.3 foreign
/// thenables' `then` property) are enforced by the type system and have no runtime behaviour to test.
@Suite("Promises/A+") struct APlusTests {
    @Test("2.1.1 a pending promise may become fulfilled or rejected")
    func pendingMayTransition() {
        let fulfilled = Promise<Int>.pending()
        let rejected = Promise<Int>.pending()
        #expect(fulfilled.promise.isPending && rejected.promise.isPending)
        fulfilled.resolver.fulfill(1)
        rejected.resolver.reject(TestError())
        #expect(fulfilled.promise.isFulfilled && rejected.promise.isRejected)
    }

    @Test("2.1.2 a fulfilled promise never changes state or value")
    func fulfilledIsFinal() {
        let (promise, resolver) = Promise<Int>.pending()
        resolver.fulfill(1)
        resolver.reject(TestError())
        resolver.fulfill(2)
        #expect(promise.value == 1)
    }

    @Test("2.1.3 a rejected promise never changes state or reason")
    func rejectedIsFinal() {
        let (promise, resolver) = Promise<Int>.pending()
        let reason = TestError()
        resolver.reject(reason)
        resolver.fulfill(1)
        resolver.reject(TestError())
        #expect(promise.error as? TestError == reason)
    }

    @Test("2.2.2 onFulfilled runs once, after fulfillment, with the value")
    func onFulfilledRunsOnceAfterFulfillment() {
        let (promise, resolver) = Promise<Int>.pending()
        nonisolated(unsafe) var calls: [Int] = []
        _ = promise.done(on: nil) { calls.append($0) }
        #expect(calls.isEmpty)
        resolver.fulfill(5)
        resolver.fulfill(6)
        #expect(calls == [5])
    }

    @Test("2.2.3 onRejected runs once, after rejection, with the reason")
    func onRejectedRunsOnceAfterRejection() {
        let (promise, resolver) = Promise<Int>.pending()
        nonisolated(unsafe) var reasons: [Error] = []
        promise.catch(on: nil) { reasons.append($0) }
        #expect(reasons.isEmpty)
        let reason = TestError()
        resolver.reject(reason)
        resolver.reject(TestError())
        #expect(reasons.count == 1)
        #expect(reasons.first as? TestError == reason)
    }

    @Test("2.2.4 handlers given a queue never run before `then` returns, even on a resolved promise")
    func handlersAreAsynchronousOnAQueue() async throws {
        let queue = DispatchQueue(label: "APlusTests.2.2.4")
        queue.suspend()
        let ran = Shared(false)
        let chained = Promise.value(1).done(on: queue) { _ in ran.withLock { $0 = true } }
        #expect(!ran.current, "the handler ran inline instead of on its queue")
        #expect(chained.isPending)
        queue.resume()
        try await chained.async()
        #expect(ran.current)
    }

    @Test("2.2.6 `then` may be called many times; handlers run in the order of their calls")
    func multipleHandlersRunInOrder() {
        let (promise, resolver) = Promise<Int>.pending()
        nonisolated(unsafe) var order: [String] = []
        _ = promise.done(on: nil) { _ in order.append("a") }
        _ = promise.map(on: nil) { _ in order.append("b") }
        promise.catch(on: nil) { _ in order.append("never") }
        _ = promise.then(on: nil) { _ -> Promise<Void> in
            order.append("c")
            return .value
        }
        resolver.fulfill(1)
        #expect(order == ["a", "b", "c"])
    }

    @Test("2.2.7.1 a value returned by onFulfilled fulfills the returned promise")
    func returnedValueFulfills() {
        #expect(Promise.value(1).map(on: nil) { $0 + 1 }.value == 2)
    }

    @Test("2.2.7.2 an error thrown by onFulfilled or onRejected rejects the returned promise")
    func thrownErrorRejects() {
        let error = TestError()
        #expect(Promise.value(1).map(on: nil) { _ -> Int in throw error }.error as? TestError == error)
        let recovered = Promise<Int>(error: TestError()).recover(on: nil) { _ -> Promise<Int> in throw error }
        #expect(recovered.error as? TestError == error)
    }

    @Test("2.2.7.3 without an onFulfilled, the returned promise fulfills with the same value")
    func fulfilmentPassesThroughErrorHandlers() {
        #expect(Promise.value(3).recover(on: nil) { _ in Promise.value(0) }.value == 3)
        #expect(Promise.value(3).ensure(on: nil) {}.value == 3)
    }

    @Test("2.2.7.4 without an onRejected, the returned promise rejects with the same reason")
    func rejectionPassesThroughValueHandlers() {
        let reason = TestError()
        let chained = Promise<Int>(error: reason)
            .map(on: nil) { $0 + 1 }
            .then(on: nil) { Promise.value($0) }
            .get(on: nil) { _ in }
        #expect(chained.error as? TestError == reason)
    }

    @Test("2.3.1 a promise resolved with itself rejects (PMKError.returnedSelf)")
    func resolvingWithItselfRejects() {
        let (source, resolver) = Promise<Int>.pending()
        let holder = Shared<Promise<Int>?>(nil)
        let chained = source.then(on: nil) { _ in holder.current! }
        holder.withLock { $0 = chained }
        resolver.fulfill(1)
        #expect(chained.error as? PMKError == .returnedSelf)
        holder.withLock { $0 = nil }
    }

    @Test("2.3.2 a promise returned by a handler is adopted: pending, then its value or reason")
    func returnedPromiseIsAdopted() {
        let inner = Promise<Int>.pending()
        let adopted = Promise.value(0).then(on: nil) { _ in inner.promise }
        #expect(adopted.isPending)
        inner.resolver.fulfill(9)
        #expect(adopted.value == 9)

        let failing = Promise<Int>.pending()
        let adoptedFailure = Promise.value(0).then(on: nil) { _ in failing.promise }
        let reason = TestError()
        failing.resolver.reject(reason)
        #expect(adoptedFailure.error as? TestError == reason)
    }
}
