import Dispatch
import PromiseCore
import TestSupport
import Testing

@Suite struct DispatchQueuePromiseTests {
    @Test func asyncPromiseRunsTheBodyOnTheQueue() async throws {
        _ = configureBackgroundQueue
        let onQueue = await backgroundQueue.async(.promise) { isOnBackground }.async()
        #expect(onQueue)
    }

    @Test func throwingBodyMakesARejectedPromise() async throws {
        let error = TestError()
        let promise: Promise<Int> = DispatchQueue.global().async(.promise) { () throws -> Int in throw error }
        await #expect(throws: error) { try await promise.async() }
        let fulfilled: Promise<Int> = DispatchQueue.global().async(.promise) { () throws -> Int in 1 }
        #expect(try await fulfilled.async() == 1)
    }
}
