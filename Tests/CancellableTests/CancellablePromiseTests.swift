import Cancellable
import Dispatch
import Foundation
import PromiseCore
import TestSupport
import Testing

@Suite struct CancellablePromiseTests {
    @Test func resolverBodyFulfillsAndItsHandlerIsNotRun() {
        var cancelled = false
        let promise = CancellablePromise<Int>(resolver: { resolver in
            resolver.fulfill(1)
            return { cancelled = true }
        })
        #expect(promise.value == 1)
        #expect(!promise.cancel())
        #expect(!cancelled)
    }

    @Test func throwingBodyRejects() {
        let error = TestError()
        let promise = CancellablePromise<Int> { _ in throw error }
        #expect(promise.error as? TestError == error)
    }

    @Test func usingFollowsThePromiseAndCancelsWithTheHandler() {
        let (inner, resolver) = Promise<Int>.pending()
        var cancels = 0
        let promise = CancellablePromise(using: inner, cancel: { cancels += 1 })
        #expect(promise.isPending)
        promise.cancel()
        #expect(cancels == 1)
        #expect(promise.isCancelled)
        resolver.fulfill(1)
        #expect(promise.isCancelled, "the late fulfillment of the wrapped promise is ignored")
        #expect(inner.value == 1, "the wrapped promise itself is not touched")
    }

    @Test func wrapperHandsOutACancelPromiseThatRejectsOnCancel() {
        var cancelPromise: Promise<Void>?
        let (work, _) = Promise<Int>.pending()
        let promise = CancellablePromise<Int>(wrapper: { cancel in
            cancelPromise = cancel
            return when(work, while: cancel)
        })
        #expect(cancelPromise?.isPending == true)
        promise.cancel()
        #expect(cancelPromise?.error as? CancellablePromiseError == .cancelled)
        #expect(promise.isCancelled)
    }

    @Test func wrapperCancelPromiseFulfillsOnceThePromiseResolves() {
        let events = LogCapture.events {
            var cancelPromise: Promise<Void>?
            let promise = CancellablePromise<Int>(wrapper: { cancel in
                cancelPromise = cancel
                return .value(1)
            })
            #expect(promise.value == 1)
            #expect(cancelPromise?.isFulfilled == true, "it can no longer be cancelled")
        }
        #expect(events.isEmpty)
    }

    /// Issue 14, item 4: as in CancellablePromiseKit, a wrapper released while pending fulfills its
    /// `cancelPromise`, so that chains waiting on it end instead of dangling.
    @Test func wrapperCancelPromiseFulfillsWhenThePromiseIsReleasedWhilePending() {
        let (work, _) = Promise<Int>.pending()
        let ended = Shared(0)
        var cancelPromise: Promise<Void>?
        do {
            _ = CancellablePromise<Int>(wrapper: { cancel in
                cancelPromise = cancel
                cancel.ensure(on: nil) { ended.increment() }.cauterize()
                return when(work, while: cancel)
            })
        }
        #expect(cancelPromise?.isFulfilled == true)
        #expect(ended.current == 1)
    }

    @Test func wrapperCancelPromiseStaysPendingWhileALinkCanStillCancelIt() {
        let (work, _) = Promise<Int>.pending()
        var cancelPromise: Promise<Void>?
        var link: CancellablePromise<Int>? = CancellablePromise<Int>(wrapper: { cancel in
            cancelPromise = cancel
            return when(work, while: cancel)
        }).map(on: nil) { $0 }
        #expect(cancelPromise?.isPending == true, "the wrapper can still be cancelled through the link")
        link?.cancel()
        #expect(cancelPromise?.isRejected == true)
        link = nil
        #expect(cancelPromise?.isRejected == true, "a rejected cancelPromise stays rejected")

        var cancelPromise2: Promise<Void>?
        var link2: CancellablePromise<Int>? = CancellablePromise<Int>(wrapper: { cancel in
            cancelPromise2 = cancel
            return when(work, while: cancel)
        }).map(on: nil) { $0 }
        #expect(cancelPromise2?.isPending == true)
        link2 = nil
        #expect(cancelPromise2?.isFulfilled == true, "released with the last link that could cancel it")
        #expect(link2 == nil)
    }

    @Test func pendingValueAndErrorFactories() {
        let (promise, resolver) = CancellablePromise<String>.pending()
        resolver.fulfill("a")
        #expect(promise.value == "a")
        #expect(CancellablePromise.value(3).value == 3)
        let error = TestError()
        #expect(CancellablePromise<Int>(error: error).error as? TestError == error)
        let (cancelled, _) = CancellablePromise<Int>.pending()
        #expect(cancelled.cancel())
        #expect(cancelled.isCancelled)
    }

    @Test func asPromiseResolvesLikeTheCancellablePromise() {
        let (promise, _) = CancellablePromise<Int>.pending()
        let plain = promise.asPromise()
        promise.cancel()
        #expect(plain.error?.isCancelled == true)
    }

    @Test func cancellationErrorIsACancellableError() {
        #expect(CancellablePromiseError.cancelled.isCancelled)
        #expect((CancellablePromiseError.cancelled as Error).isCancelled)
        #expect(CancellablePromiseError.cancelled.localizedDescription == "The promise was cancelled")
    }

    @Test func cancelHandlerMayCancelAgainWithoutDeadlock() {
        let holder = Shared<CancellablePromise<Int>?>(nil)
        let reentered = Shared<Bool?>(nil)
        let promise = CancellablePromise<Int> { _ in
            { reentered.withLock { $0 = holder.current?.cancel() } }
        }
        holder.withLock { $0 = promise }
        #expect(promise.cancel())
        #expect(reentered.current == false)
        holder.withLock { $0 = nil }
    }

    @Test func droppingAPendingCancellablePromiseLogsNothing() {
        let events = LogCapture.events {
            _ = CancellablePromise<Int> { _ in {} }
            _ = CancellablePromise<Int>.pending()
        }
        #expect(events.isEmpty)
    }

    @Test func isSendableWhenTheValueIs() async throws {
        let (promise, resolver) = CancellablePromise<Int>.pending()
        DispatchQueue.global().async { resolver.fulfill(5) }
        let value = try await Task.detached { try await promise.async() }.value
        #expect(value == 5)
    }
}
