import Cancellable
import Dispatch
import PromiseCore
import TestSupport
import Testing

@Suite struct CancellablePromiseAsyncTests {
    @Test func awaitReturnsTheValue() async throws {
        let (promise, resolver) = CancellablePromise<Int>.pending()
        DispatchQueue.global().async { resolver.fulfill(4) }
        #expect(try await promise.async() == 4)
    }

    @Test func cancellingTheAwaitingTaskCancelsThePromise() async {
        let (promise, _, cancels) = CancellationSemanticsTests.work()
        let task = Task { try await promise.async() }
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result else {
            Issue.record("expected the await to throw")
            return
        }
        #expect(error as? CancellablePromiseError == .cancelled)
        #expect(cancels.current == 1)
        #expect(promise.isCancelled)
    }

    @Test func operationInitFulfillsWithTheClosuresValue() async throws {
        let promise = CancellablePromise { () async throws -> Int in 8 }
        #expect(try await promise.async() == 8)
        let error = TestError()
        let failing = CancellablePromise { () async throws -> Int in throw error }
        await #expect(throws: error) { try await failing.async() }
    }

    @Test func cancelCancelsTheOperationsTask() async {
        let started = AsyncStream<Void>.makeStream()
        let sawCancellation = Shared(false)
        let promise = CancellablePromise { () async throws -> Int in
            started.continuation.yield()
            do {
                try await Task.sleep(nanoseconds: 600_000_000_000)
            } catch {
                sawCancellation.withLock { $0 = Task.isCancelled }
                throw error
            }
            return 0
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        #expect(promise.cancel())
        #expect(promise.isCancelled)
        // Wait for the task to observe the cancellation.
        _ = await promise.asPromise().asResult().async()
        while !sawCancellation.current { await Task.yield() }
        #expect(sawCancellation.current)
    }

    @Test func cancellationErrorThrownByTheOperationMeansCancelled() async {
        let promise = CancellablePromise { () async throws -> Int in throw CancellationError() }
        let result = await promise.asPromise().asResult().async()
        guard case .failure(let error) = result else {
            Issue.record("expected a rejection")
            return
        }
        #expect(error as? CancellablePromiseError == .cancelled)
    }
}
