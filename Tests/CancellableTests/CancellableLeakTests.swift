import Cancellable
import Dispatch
import PromiseCore
import PromiseTesting
import TestSupport
import Testing

/// Every cancellable operation, over work that never resolves, then orphaned: the promises, their cancel
/// handlers and everything the handlers captured are freed, and nothing is logged (Guarantees, rule 7).
@Suite struct CancellableLeakTests {
    func expectFreed(_ build: ([CancellablePromise<Int>]) -> Void) {
        weak var weakInput: CancellablePromise<Int>?
        weak var weakCapture: Tracked?
        let events = LogCapture.events {
            let capture = Tracked()
            weakCapture = capture
            let inputs = (0..<3).map { _ in CancellablePromise<Int> { _ in { _ = capture } } }
            weakInput = inputs[0]
            build(inputs)
        }
        #expect(weakInput == nil)
        #expect(weakCapture == nil)
        #expect(events.isEmpty)
    }

    @Test func chains() {
        expectFreed { _ = $0[0].map(on: nil) { $0 }.done(on: nil) { _ in } }
        // The closures capture only the promise they return: capturing `inputs` would make the caller's own
        // cycle (the handler lives in `inputs[0]`).
        expectFreed { inputs in
            let second = inputs[1]
            _ = inputs[0].then(on: nil) { _ in second }
        }
        expectFreed { inputs in
            let second = inputs[1]
            _ = inputs[0].recover(on: nil) { _ in second }.ensure(on: nil) {}
        }
        expectFreed { _ = $0[0].ensureThen(on: nil) { Promise.value }.catch(on: nil) { _ in } }
        expectFreed { _ = $0[0].tap(on: nil) { _ in }.get(on: nil) { _ in }.compactMap(on: nil) { $0 }.asVoid() }
    }

    @Test func combinatorsWithAndWithoutAutoCancel() {
        for autoCancel in [false, true] {
            expectFreed { _ = race($0, autoCancel: autoCancel) }
            expectFreed { _ = when(fulfilled: $0, autoCancel: autoCancel) }
            expectFreed { _ = when(fulfilled: $0[0], $0[1], $0[2], autoCancel: autoCancel) }
            expectFreed { _ = when(resolved: $0, autoCancel: autoCancel) }
            expectFreed { _ = any($0, autoCancel: autoCancel) }
            expectFreed { _ = some(2, $0, autoCancel: autoCancel) }
            expectFreed {
                _ = when($0[0], while: CancellablePromise<Void>.pending().promise.asPromise(), autoCancel: autoCancel)
            }
        }
    }

    @Test func wrappersAndTimeouts() {
        expectFreed { _ = CancellablePromise(using: $0[0].asPromise(), cancel: {}) }
        expectFreed { inputs in _ = CancellablePromise<Int>(wrapper: { _ in inputs[0].asPromise() }) }
        expectFreed { _ = $0[0].asPromise().asCancellable() }
    }

    @Test func aPendingTimeoutHoldsTheWorksCancelHandlerUntilItFires() {
        let scheduler = TestClock()
        let cancels = Shared(0)
        weak var weakCapture: Tracked?
        do {
            let capture = Tracked()
            weakCapture = capture
            let input = CancellablePromise<Int> { _ in
                {
                    _ = capture
                    cancels.increment()
                }
            }
            _ = withPromiseClock(scheduler) { input.timeout(seconds: 60) }
        }
        #expect(weakCapture != nil, "the timer must still be able to cancel the work")
        scheduler.advance(by: .seconds(60))
        #expect(cancels.current == 1)
        #expect(weakCapture == nil)
        #expect(scheduler.pendingTimers == 0)
    }

    @Test func retriesAndDelays() {
        // A retry whose attempt never resolves, orphaned, and one cancelled. The body hands the attempt over
        // rather than capturing it: a retry keeps its body for later attempts, so a body that held its own
        // attempt would be the caller's cycle (as with a `then` body capturing the promise it is attached to).
        expectFreed { inputs in
            let attempt = Shared<CancellablePromise<Int>?>(inputs[0])
            _ = retry(3, on: nil) { attempt.withLock { $0.take()! } }
        }
        expectFreed { inputs in
            let attempt = Shared<CancellablePromise<Int>?>(inputs[0])
            retry(3, on: nil) { attempt.withLock { $0.take()! } }.cancel()
        }
        // A cancelled delay lets go of its chain at once (Dispatch still holds the timer for an hour).
        expectFreed { inputs in
            let delay: CancellablePromise<Void> = after(seconds: 3_600)
            let attempt = inputs[0]
            delay.then(on: nil) { attempt }.cancel()
        }
    }

    @Test func scopesAndConcurrentWhen() {
        expectFreed { inputs in
            let scope = CancelScope()
            scope.add(inputs[0].map(on: nil) { $0 })
        }
        expectFreed { inputs in
            CancelScope(cancelsOnDeinit: true).add(inputs[0])
        }
        // The generator hands its promises over rather than holding them (see when(fulfilled:concurrently:)).
        for cancels in [false, true] {
            expectFreed { inputs in
                let remaining = Shared(inputs)
                let generator = AnyIterator { remaining.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
                let all = when(fulfilled: generator, concurrently: 2)
                if cancels { all.cancel() }
            }
        }
    }

    @Test func afterCancellationEverythingIsFreed() {
        expectFreed { inputs in
            race(inputs.map { $0.map(on: nil) { $0 } }, autoCancel: true).cancel()
        }
        expectFreed { inputs in
            let second = inputs[1]
            inputs[0].then(on: nil) { _ in second }.done(on: nil) { _ in }.cancel()
        }
    }

    /// A cancellable link's promise holds its step until the input delivers: the step — and what its body
    /// captured — is released once it ran, or the result passed through it, while the link is still held.
    @Test func aLinkReleasesItsStepOnceTheInputDeliveredWhileTheLinkIsHeld() {
        /// The link the step made, and a wait for it to resolve.
        typealias Made = (link: AnyObject, wait: () -> Void)
        func made<T>(_ link: CancellablePromise<T>) -> Made {
            (link, { _ = try? link.asPromise().wait() })
        }
        typealias Step = (CancellablePromise<Int>, Tracked) -> Made
        let steps: [(String, Step)] = [
            ("map", { input, capture in made(input.map(on: nil) { _ in withExtendedLifetime(capture) { 1 } }) }),
            ("done", { input, capture in made(input.done(on: nil) { _ in withExtendedLifetime(capture) {} }) }),
            ("get", { input, capture in made(input.get(on: nil) { _ in withExtendedLifetime(capture) {} }) }),
            ("tap", { input, capture in made(input.tap(on: nil) { _ in withExtendedLifetime(capture) {} }) }),
            (
                "compactMap",
                { input, capture in
                    made(input.compactMap(on: nil) { value in withExtendedLifetime(capture) { value } })
                }
            ),
            (
                "then",
                { input, capture in
                    made(input.then(on: nil) { value in withExtendedLifetime(capture) { Promise.value(value) } })
                }
            ),
            (
                "recover",
                { input, capture in
                    made(input.recover(on: nil) { _ in withExtendedLifetime(capture) { Promise.value(0) } })
                }
            ),
            ("ensure", { input, capture in made(input.ensure(on: nil) { withExtendedLifetime(capture) {} }) }),
            (
                "ensureThen",
                { input, capture in
                    made(input.ensureThen(on: nil) { withExtendedLifetime(capture) { Guarantee.value(()) } })
                }
            ),
            (
                "map on a queue",
                { input, capture in made(input.map(on: .global()) { _ in withExtendedLifetime(capture) { 1 } }) }
            ),
        ]
        for (name, step) in steps {
            for rejects in [false, true] {
                let (input, resolver) = CancellablePromise<Int>.pending()
                expectReleasedOnceSettled("\(name), input \(rejects ? "rejected" : "fulfilled")") {
                    step(input, $0)
                } settle: {
                    made in
                    if rejects { resolver.reject(TestError()) } else { resolver.fulfill(1) }
                    made.wait()
                }
            }
        }
    }
}
