import Dispatch
import Foundation
import PromiseCore
import TestSupport
import Testing

/// The lock inside every promise and every `Locked` value. Its contended path parks threads; these tests force
/// that path and check mutual exclusion and hand-over. Under ThreadSanitizer (CI) they also check that the
/// sanitizer sees the hand-over: the standard library's `Mutex` parks through an uninstrumented path and is
/// reported as racing.
@Suite struct LockTests {
    @Test func lockedCountsExactlyUnderContention() {
        let counter = Locked(0)
        let perThread = 50_000
        runConcurrently(threads: 8) { _ in
            for _ in 0..<perThread {
                counter.withLock { $0 += 1 }
            }
        }
        #expect(counter.withLock { $0 } == 8 * perThread)
    }

    @Test func aWaiterGetsTheLockOnceItIsReleasedAndSeesTheHoldersWrites() {
        let shared = Locked([Int]())
        let waiterIsAboutToLock = Locked(false)
        let waiterDone = DispatchSemaphore(value: 0)
        shared.withLock { values in
            Thread.detachNewThread {
                waiterIsAboutToLock.withLock { $0 = true }
                shared.withLock { $0.append(2) }
                waiterDone.signal()
            }
            // Hold the lock until the waiter is trying to take it, then long enough for it to stop spinning and
            // park (it spins 64 times); it must not get in before this holder has finished.
            while !waiterIsAboutToLock.withLock({ $0 }) {}
            for _ in 0..<100_000 { values.append(0) }
            values.removeAll()
            values.append(1)
        }
        waiterDone.wait()
        #expect(shared.withLock { $0 } == [1, 2])
    }

    @Test func promisesResolvedAndObservedFromManyThreadsRunEveryHandlerOnce() {
        let promises = (0..<2_000).map { _ in Promise<Int>.pending() }
        let runs = Locked(0)
        runConcurrently(threads: 4) { thread in
            for (index, item) in promises.enumerated() {
                if index % 4 == thread {
                    item.resolver.fulfill(index)
                } else {
                    item.promise.pipe { _ in runs.withLock { $0 += 1 } }
                }
            }
        }
        #expect(runs.withLock { $0 } == 2_000 * 3)
        #expect(promises.enumerated().allSatisfy { $1.promise.value == $0 })
    }
}
