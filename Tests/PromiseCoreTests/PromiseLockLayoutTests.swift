import TestSupport
import Testing

@testable import PromiseCore

/// Where `PromiseLock` looks for its lock word: the first stored property of its owner's root class
/// (`PromiseLock.address(in:)`). On Darwin every lock is found that way — the `os_unfair_lock` inside a promise
/// has no address of its own in Swift — so an owner whose lock is not its first stored property would lock some
/// other field. Object layout is the same on Linux, where the lock word is an `Atomic` with an address of its own:
/// these tests compare the two, for every kind of object that owns a lock.
@Suite struct PromiseLockLayoutTests {
    @Test func aPromiseAGuaranteeAndAChainLinkFindTheirLock() {
        let (promise, resolver) = Promise<Int>.pending()
        let link = promise.map(on: nil) { $0 + 1 }
        let guarantee = Guarantee<String>.value("")
        let (unresolved, _) = Guarantee<[Int]>.pending()
        #expect(PromiseLock.address(in: promise) == storedAddress(of: promise.lock))
        #expect(PromiseLock.address(in: link) == storedAddress(of: link.lock))
        #expect(PromiseLock.address(in: guarantee) == storedAddress(of: guarantee.lock))
        #expect(PromiseLock.address(in: unresolved) == storedAddress(of: unresolved.lock))
        resolver.fulfill(1)
        #expect(link.value == 2)
    }

    @Test func aLockedValueFindsItsLock() {
        let locked = Locked((1, "two", [3]))
        #expect(PromiseLock.address(in: locked) == storedAddress(of: locked.lock))
        #expect(locked.withLock { $0.1 } == "two")
    }
}
