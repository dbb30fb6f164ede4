import Dispatch
import PromiseCore
import TestSupport
import Testing

@Suite struct GuaranteeTests {
    @Test func resolverClosureResolvesIt() {
        var resolve: ((Int) -> Void)?
        let guarantee = Guarantee<Int> { resolve = $0 }
        #expect(guarantee.isPending)
        resolve?(5)
        #expect(guarantee.value == 5)
    }

    @Test func pendingAndValueFactories() {
        let (guarantee, resolve) = Guarantee<String>.pending()
        resolve("a")
        resolve("b")
        #expect(guarantee.value == "a")
        #expect(Guarantee.value(1).value == 1)
        #expect(Guarantee<Void>.value.isFulfilled)
        #expect(Guarantee<Void>().isFulfilled)
        #expect(Guarantee(Swift.Result<Int, Never>.success(3)).value == 3)
    }

    @Test func chainMethodsStayGuarantees() {
        nonisolated(unsafe) var seen: [String] = []
        let result: Guarantee<Void> = Guarantee.value(2)
            .get(on: nil) { seen.append("get \($0)") }
            .map(on: nil) { $0 * 10 }
            .then(on: nil) { Guarantee.value($0 + 1) }
            .done(on: nil) { seen.append("done \($0)") }
        #expect(result.isFulfilled)
        #expect(seen == ["get 2", "done 21"])
        #expect(Guarantee.value(1).asVoid().isFulfilled)
    }

    @Test func resolveClosureCanBeCalledFromAnotherThread() async {
        let value = await Guarantee<Int> { resolve in
            DispatchQueue.global().async { resolve(8) }
        }.async()
        #expect(value == 8)
    }

    @Test func waitBlocksUntilResolved() {
        let (guarantee, resolve) = Guarantee<Int>.pending()
        DispatchQueue.global().async { resolve(6) }
        #expect(guarantee.wait() == 6)
    }

    @Test func deallocatingAPendingGuaranteeLogs() {
        let events = LogCapture.events {
            _ = Guarantee<Int> { _ in }
        }
        #expect(events.filter(\.isPendingGuaranteeDeallocated).count == 1)
    }

    @Test func deallocatingAResolvedGuaranteeDoesNotLog() {
        let events = LogCapture.events {
            _ = Guarantee<Int> { $0(1) }
            _ = Guarantee.value(1).map(on: nil) { $0 }
        }
        #expect(events.isEmpty)
    }
}
