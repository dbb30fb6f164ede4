import PromiseCore
import TestSupport
import Testing

/// Resolution runs handlers in a loop, not by recursion: long chains cannot overflow the stack. Each chain is built
/// and resolved on a thread of its own, not on one of the cooperative pool's, which other tests' tasks need.
@Suite struct DeepChainTests {
    @Test func aMillionLinkChainResolvesWithoutOverflowingTheStack() async {
        let value = await onAThreadOfItsOwn {
            let (first, resolver) = Promise<Int>.pending()
            var last = first
            for _ in 0..<1_000_000 {
                last = last.map(on: nil) { $0 + 1 }
            }
            resolver.fulfill(0)
            return last.value
        }
        #expect(value == 1_000_000)
    }

    @Test func aLongChainOfReturnedPromisesResolves() async {
        let value = await onAThreadOfItsOwn {
            let (first, resolver) = Promise<Int>.pending()
            var last = first
            for _ in 0..<100_000 {
                last = last.then(on: nil) { Promise.value($0 + 1) }
            }
            resolver.fulfill(0)
            return last.value
        }
        #expect(value == 100_000)
    }

    @Test func aLongGuaranteeChainResolves() async {
        let value = await onAThreadOfItsOwn {
            let (first, resolve) = Guarantee<Int>.pending()
            var last = first
            for _ in 0..<100_000 {
                last = last.map(on: nil) { $0 + 1 }
            }
            resolve(0)
            return last.value
        }
        #expect(value == 100_000)
    }
}
