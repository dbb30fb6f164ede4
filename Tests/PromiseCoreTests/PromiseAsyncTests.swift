import Dispatch
import PromiseCore
import TestSupport
import Testing

@Suite struct PromiseAsyncTests {
    @Test func awaitReturnsTheValue() async throws {
        let (promise, resolver) = Promise<Int>.pending()
        DispatchQueue.global().async { resolver.fulfill(3) }
        #expect(try await promise.async() == 3)
    }

    @Test func awaitThrowsTheError() async {
        let error = TestError()
        await #expect(throws: error) { try await Promise<Int>(error: error).async() }
    }

    @Test func awaitAGuarantee() async {
        #expect(await Guarantee.value(5).async() == 5)
    }

    @Test func promiseFromAnAsyncClosure() async throws {
        let promise = Promise { () async throws -> Int in
            await Task.yield()
            return 7
        }
        #expect(try await promise.async() == 7)
        let error = TestError()
        await #expect(throws: error) { try await Promise<Int> { () async throws -> Int in throw error }.async() }
    }

    @Test func guaranteeFromAnAsyncClosure() async {
        let guarantee = Guarantee { () async -> String in "x" }
        #expect(await guarantee.async() == "x")
    }
}
