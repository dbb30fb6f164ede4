import PromiseCore
import TestSupport
import Testing

/// Resolution runs handlers in a loop, not by recursion: long chains cannot overflow the stack.
@Suite struct DeepChainTests {
    @Test func aMillionLinkChainResolvesWithoutOverflowingTheStack() {
        let (first, resolver) = Promise<Int>.pending()
        var last = first
        for _ in 0..<1_000_000 {
            last = last.map(on: nil) { $0 + 1 }
        }
        resolver.fulfill(0)
        #expect(last.value == 1_000_000)
    }

    @Test func aLongChainOfReturnedPromisesResolves() {
        let (first, resolver) = Promise<Int>.pending()
        var last = first
        for _ in 0..<100_000 {
            last = last.then(on: nil) { Promise.value($0 + 1) }
        }
        resolver.fulfill(0)
        #expect(last.value == 100_000)
    }

    @Test func aLongGuaranteeChainResolves() {
        let (first, resolve) = Guarantee<Int>.pending()
        var last = first
        for _ in 0..<100_000 {
            last = last.map(on: nil) { $0 + 1 }
        }
        resolve(0)
        #expect(last.value == 100_000)
    }
}
