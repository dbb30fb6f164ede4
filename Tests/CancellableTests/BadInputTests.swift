import Cancellable
import Dispatch
import PromiseCore
import PromiseTesting
import TestSupport
import Testing

/// Issue 6's bad-input table: each misuse has a documented outcome (the Guarantees article's *Bad input*, in the
/// Cancellable catalog),
/// and none crashes, deadlocks or leaks.
@Suite struct BadInputTests {
    @Test func emptyInputs() {
        #expect(race([Promise<Int>]()).error as? PMKError == .badInput)
        #expect(race(fulfilled: [Promise<Int>]()).error as? PMKError == .badInput)
        #expect(race([CancellablePromise<Int>](), autoCancel: true).error as? PMKError == .badInput)
        #expect(when(fulfilled: [Promise<Int>]()).value == [])
        #expect(when(fulfilled: [CancellablePromise<Int>](), autoCancel: true).value == [])
        #expect(when(resolved: [Promise<Int>]()).value?.isEmpty == true)
        #expect(when(resolved: [CancellablePromise<Int>](), autoCancel: true).value?.isEmpty == true)
        #expect(any([Promise<Int>]()).value?.isEmpty == true)
        #expect(any([CancellablePromise<Int>](), autoCancel: true).value?.isEmpty == true)
        #expect(some(1, [Promise<Int>]()).error as? PMKError == .badInput)
        #expect(some(1, [CancellablePromise<Int>](), autoCancel: true).error as? PMKError == .badInput)
    }

    @Test(arguments: [-1, 0, 4, Int.max])
    func someWithACountOutsideOneToTheInputCount(count: Int) {
        let three = (0..<3).map { _ in CancellablePromise<Int>.pending().promise }
        #expect(some(count, three.map { $0.asPromise() }).error as? PMKError == .badInput)
        #expect(some(count, three).error as? PMKError == .badInput)
        let untouched = three.allSatisfy { $0.isPending }
        #expect(untouched, "without autoCancel the inputs are never cancelled")
        #expect(some(count, three, autoCancel: true).error as? PMKError == .badInput)
        let cancelled = three.allSatisfy { $0.isCancelled }
        #expect(cancelled, "with autoCancel a decided outcome, bad input included, cancels the inputs")
    }

    @Test(arguments: [0, -1, Int.min])
    func concurrencyBelowOne(concurrently: Int) {
        #expect(
            when(fulfilled: [Promise.value(1)].makeIterator(), concurrently: concurrently).error as? PMKError
                == .badInput
        )
        let resolved = when(resolved: [Promise.value(1)].makeIterator(), concurrently: concurrently).value
        #expect(resolved?.count == 1 && resolved?.first?.isFulfilled == false)
    }

    @Test(arguments: [0, -1, -Double.infinity, Double.nan])
    func zeroNegativeOrNaNTimeoutsTimeOutAtOnce(seconds: Double) {
        let (work, _) = CancellablePromise<Int>.pending()
        let limited = work.timeout(seconds: seconds)
        #expect(limited.error is TimeoutError)
        #expect(work.isCancelled)
    }

    @Test func anInfiniteTimeoutNeverFires() {
        let scheduler = TestClock()
        let (work, resolver) = CancellablePromise<Int>.pending()
        let limited = withPromiseClock(scheduler) { work.timeout(seconds: .infinity) }
        scheduler.advance(by: .seconds(1_000_000_000))
        #expect(limited.isPending)
        resolver.fulfill(1)
        #expect(limited.value == 1)
    }

    @Test func handlersReturningTheirOwnPromiseRejectWithReturnedSelf() {
        let plain = Promise<Int>.pending()
        let cancellable = CancellablePromise<Int>.pending()
        let holders = (Shared<Promise<Int>?>(nil), Shared<CancellablePromise<Int>?>(nil))
        let thenSelf = plain.promise.then(on: nil) { _ in holders.0.current! }
        let cancellableSelf = cancellable.promise.then(on: nil) { _ in holders.1.current! }
        holders.0.withLock { $0 = thenSelf }
        holders.1.withLock { $0 = cancellableSelf }
        plain.resolver.fulfill(1)
        cancellable.resolver.fulfill(1)
        #expect(thenSelf.error as? PMKError == .returnedSelf)
        #expect(cancellableSelf.error as? PMKError == .returnedSelf)
        holders.0.withLock { $0 = nil }
        holders.1.withLock { $0 = nil }
    }

    @Test func resolvingTwiceKeepsTheFirstResult() {
        let (promise, resolver) = Promise<Int>.pending()
        resolver.fulfill(1)
        resolver.reject(TestError())
        let (guarantee, resolve) = Guarantee<Int>.pending()
        resolve(1)
        resolve(2)
        let (cancellable, cancellableResolver) = CancellablePromise<Int>.pending()
        cancellableResolver.fulfill(1)
        cancellableResolver.fulfill(2)
        cancellable.cancel()
        #expect(promise.value == 1 && guarantee.value == 1 && cancellable.value == 1)
    }

    @Test func cancellingFromInsideItsOwnCancelHandlerReturnsFalse() {
        let holder = Shared<CancellablePromise<Int>?>(nil)
        let inner = Shared<Bool?>(nil)
        let promise = CancellablePromise<Int> { _ in { inner.withLock { $0 = holder.current?.cancel() } } }
        holder.withLock { $0 = promise }
        #expect(promise.cancel())
        #expect(inner.current == false)
        holder.withLock { $0 = nil }
    }

    @Test func cancellingAChainFromInsideItsOwnThenBodyCancelsTheReturnedPromise() {
        let (root, resolver) = CancellablePromise<Int>.pending()
        let (inner, _) = CancellablePromise<Int>.pending()
        let holder = Shared<CancellablePromise<Int>?>(nil)
        let chain = root.then(on: nil) { _ -> CancellablePromise<Int> in
            holder.current?.cancel()
            return inner
        }
        holder.withLock { $0 = chain }
        resolver.fulfill(1)
        #expect(chain.isCancelled)
        #expect(inner.isCancelled, "returned after the cancel: cancelled at once")
        holder.withLock { $0 = nil }
    }

    @Test func waitingOnWorkThatNeverResolvesEndsWithATimeout() {
        let (never, _) = CancellablePromise<Int>.pending()
        #expect(throws: TimeoutError(seconds: 0.05)) { try never.timeout(seconds: 0.05).asPromise().wait() }
        #expect(never.isCancelled)
    }

    @Test func cocoaConventionWithNeitherValueNorError() {
        #expect(Promise<Int> { $0.resolve(Int?.none, nil) }.error as? PMKError == .invalidCallingConvention)
        #expect(
            CancellablePromise<Int> { resolver in
                resolver.resolve(Int?.none, nil)
                return {}
            }.error as? PMKError == .invalidCallingConvention
        )
    }
}
