extension Promise {
    /// Waits for the promise in Swift Concurrency: returns its value or throws its error.
    ///
    /// ```swift
    /// let user = try await fetchUser().async()
    /// ```
    ///
    /// > Note: the promise does not hop to a queue to deliver its result: the task resumes as soon as the
    /// > promise resolves, on its own executor.
    public func async() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            pipe { result in
                switch result {
                case .fulfilled(let value): continuation.resume(returning: UncheckedSendable(value))
                case .rejected(let error): continuation.resume(throwing: error)
                }
            }
        }.value
    }

    /// Makes a promise from an `async` closure, run in a new `Task`.
    ///
    /// ```swift
    /// let promise = Promise { try await api.fetchUser() }
    /// ```
    ///
    /// - Parameters:
    ///   - priority: the task's priority.
    ///   - operation: the work; its return value fulfills the promise and its error rejects it.
    public convenience init(
        priority: TaskPriority? = nil,
        operation: @escaping @Sendable () async throws -> T
    ) {
        self.init(state: nil)
        let box = UncheckedSendable(self)
        Task(priority: priority) {
            do {
                let value = try await operation()
                box.value.resolve(.fulfilled(value))
            } catch {
                box.value.resolve(.rejected(error))
            }
        }
    }
}

extension Guarantee {
    /// Waits for the guarantee in Swift Concurrency.
    ///
    /// ```swift
    /// await after(seconds: 1).async()
    /// ```
    public func async() async -> T {
        await withCheckedContinuation { continuation in
            pipe { result in
                guard case .fulfilled(let value) = result else {
                    preconditionFailure("Internal inconsistency: a guarantee rejected")
                }
                continuation.resume(returning: UncheckedSendable(value))
            }
        }.value
    }

    /// Makes a guarantee from a non-throwing `async` closure, run in a new `Task`.
    ///
    /// ```swift
    /// let guarantee = Guarantee { await cache.load() }
    /// ```
    public convenience init(
        priority: TaskPriority? = nil,
        operation: @escaping @Sendable () async -> T
    ) {
        self.init(state: nil)
        let box = UncheckedSendable(self)
        Task(priority: priority) {
            box.value.resolve(.fulfilled(await operation()))
        }
    }
}
