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
        let (promise, _, cancels) = pendingWork()
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

    @Test(timeLimit(minutes: 1))
    func cancelCancelsTheOperationsTask() async {
        let started = AsyncStream<Void>.makeStream()
        // What the operation's task saw when its sleep ended: whether it was cancelled.
        let ended = AsyncStream<Bool>.makeStream()
        let promise = CancellablePromise { () async throws -> Int in
            started.continuation.yield()
            do {
                try await Task.sleep(nanoseconds: 600_000_000_000)
            } catch {
                ended.continuation.yield(Task.isCancelled)
                throw error
            }
            ended.continuation.yield(false)  // the sleep ran its ten minutes: never cancelled
            return 0
        }
        var iterator = started.stream.makeAsyncIterator()
        await iterator.next()
        #expect(promise.cancel())
        #expect(promise.isCancelled)
        var endings = ended.stream.makeAsyncIterator()
        #expect(await endings.next() == true, "the operation's task was cancelled, which ended its sleep")
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
