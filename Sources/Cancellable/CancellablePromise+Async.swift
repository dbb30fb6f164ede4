import PromiseCore

extension CancellablePromise {
    /// Waits for the promise in Swift Concurrency; cancelling the awaiting task cancels the promise.
    ///
    /// ```swift
    /// let task = Task { try await download(url).async() }
    /// task.cancel()   // the download stops; the await throws CancellablePromiseError.cancelled
    /// ```
    public func async() async throws -> T {
        let cancellable = UncheckedSendable(self)
        return try await withTaskCancellationHandler {
            try await promise.async()
        } onCancel: {
            cancellable.value.cancel()
        }
    }

    /// Makes a cancellable promise from an `async` closure, run in a new `Task`; `cancel()` cancels the task.
    ///
    /// ```swift
    /// let download = CancellablePromise { try await session.data(from: url).0 }
    /// download.cancel()   // cancels the task; `session.data` throws and the promise is already rejected
    /// ```
    ///
    /// A `CancellationError` thrown by `operation` rejects the promise with ``CancellablePromiseError/cancelled``.
    public convenience init(
        priority: TaskPriority? = nil,
        file: StaticString = #fileID,
        line: UInt = #line,
        operation: @escaping @Sendable () async throws -> T
    ) {
        self.init(file: file, line: line)
        let sink = UncheckedSendable(self.sink)
        let task = Task(priority: priority) {
            do {
                let value = try await operation()
                sink.value.resolve(.fulfilled(value), inHandler: false)
            } catch is CancellationError {
                sink.value.resolve(.rejected(CancellablePromiseError.cancelled), inHandler: false)
            } catch {
                sink.value.resolve(.rejected(error), inHandler: false)
            }
        }
        addCancelAction { task.cancel() }
    }
}
