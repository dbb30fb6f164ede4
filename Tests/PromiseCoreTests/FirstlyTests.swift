import PromiseCore
import TestSupport
import Testing

@Suite struct FirstlyTests {
    @Test func followsThePromiseTheBodyReturns() {
        let (inner, resolver) = Promise<Int>.pending()
        let started = firstly { inner }
        #expect(started.isPending)
        resolver.fulfill(1)
        #expect(started.value == 1)
    }

    @Test func throwingBodyRejects() {
        let error = TestError()
        let started = firstly { () throws -> Promise<Int> in throw error }
        #expect(started.error as? TestError == error)
    }

    @Test func guaranteeBodyStaysAGuarantee() {
        let started: Guarantee<Int> = firstly { Guarantee.value(2) }
        #expect(started.value == 2)
    }
}
