import TestSupport
import Testing

@testable import Cancellable
@testable import PromiseCore

/// Where `PromiseLock` looks for the lock of a cancellation state and of a cancellable promise's box: the first
/// stored property of the object's root class (see `PromiseLockLayoutTests` in PromiseCore's tests: on Darwin that
/// is the only way the lock word is found).
@Suite struct CancellationLockLayoutTests {
    @Test func aCancellablePromiseItsLinkAndTheirStatesFindTheirLocks() {
        let (work, resolver) = CancellablePromise<Int>.pending()
        let link = work.map(on: nil) { $0 + 1 }
        for promise in [work, link] {
            let state = promise.handle.state
            #expect(PromiseLock.address(in: state) == storedAddress(of: state.lock))
            #expect(PromiseLock.address(in: promise.promise) == storedAddress(of: promise.promise.lock))
        }
        resolver.fulfill(1)
        #expect(link.value == 2)
    }
}
