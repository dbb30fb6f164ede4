/// Pulls promises from `promiseIterator`, keeping at most `concurrently` pending at once, and fulfills with all
/// their values in the order they were generated; rejects with the first error and then stops pulling.
///
/// ```swift
/// let downloads = urls.lazy.map { download($0) }.makeIterator()
/// when(fulfilled: downloads, concurrently: 3).done { files in … }
/// ```
///
/// A `concurrently` below 1 rejects with ``PMKError/badInput`` without pulling.
///
/// > Note: the pending promises hold the iterator until it is exhausted or the outcome is decided. An
/// > iterator that itself holds the promises (an array's) forms a cycle with them while they are pending;
/// > prefer a lazy generator, as in the example.
public func when<It: IteratorProtocol>(
    fulfilled promiseIterator: It,
    concurrently: Int
) -> Promise<[It.Element.T]> where It.Element: Thenable {
    guard concurrently > 0 else {
        return Promise(error: PMKError.badInput)
    }
    let promise = Promise<[It.Element.T]>(state: nil)
    ConcurrentPuller(promiseIterator, limit: concurrently, stopsOnRejection: true) { outcome in
        switch outcome {
        case .fulfilled(let results):
            promise.resolveInHandler(.fulfilled(results.map { $0.fulfilledValue.unsafelyUnwrapped }))
        case .rejected(let error):
            promise.resolveInHandler(.rejected(error))
        }
    }.pull()
    return promise
}

/// Pulls promises from `promiseIterator`, keeping at most `concurrently` pending at once, and resolves with all
/// their results in the order they were generated.
///
/// ```swift
/// when(resolved: uploads.makeIterator(), concurrently: 2).done { results in … }
/// ```
///
/// A `concurrently` below 1 pulls nothing and resolves with the single result `.rejected(PMKError.badInput)`
/// (a guarantee cannot reject).
public func when<It: IteratorProtocol>(
    resolved promiseIterator: It,
    concurrently: Int
) -> Guarantee<[Result<It.Element.T>]> where It.Element: Thenable {
    guard concurrently > 0 else {
        return .value([.rejected(PMKError.badInput)])
    }
    let guarantee = Guarantee<[Result<It.Element.T>]>(state: nil)
    ConcurrentPuller(promiseIterator, limit: concurrently, stopsOnRejection: false) { outcome in
        guard case .fulfilled(let results) = outcome else {
            preconditionFailure("Internal inconsistency: when(resolved:concurrently:) rejected")
        }
        guarantee.resolveInHandler(.fulfilled(results))
    }.pull()
    return guarantee
}

/// Drives `when(…:concurrently:)`.
///
/// The iterator is user code, so it is never called under the lock: one thread at a time holds the "pull
/// token" (`isPulling`) and alone touches the iterator. It re-reads the state under the lock before every
/// pull and gives the token back in the same critical section in which it decides to stop, so a completion
/// either sees the token free (and pulls itself) or is seen by the puller's next check.
private final class ConcurrentPuller<It: IteratorProtocol>: @unchecked Sendable where It.Element: Thenable {
    // @unchecked Sendable: `iterator` is only touched by the token holder; everything else is in `state`.
    typealias Value = It.Element.T

    private var iterator: It
    private let state: Locked<PullState<Value>>
    private let finish: (Result<[Result<Value>]>) -> Void

    init(
        _ iterator: It,
        limit: Int,
        stopsOnRejection: Bool,
        finish: @escaping (Result<[Result<Value>]>) -> Void
    ) {
        self.iterator = iterator
        self.state = Locked(PullState(limit: limit, stopsOnRejection: stopsOnRejection))
        self.finish = finish
    }

    func pull() {
        guard state.withLock({ $0.takeToken() }) else { return }
        while true {
            switch state.withLock({ $0.nextStep() }) {
            case .stop:
                return
            case .finish(let outcome):
                finish(outcome)
                return
            case .pull(let index):
                if let thenable = iterator.next() {
                    thenable.pipe { result in
                        self.complete(index, with: result)
                    }
                } else if let outcome = state.withLock({ $0.exhausted() }) {
                    finish(outcome)
                    return
                }
            }
        }
    }

    private func complete(_ index: Int, with result: Result<Value>) {
        if let outcome = state.withLock({ $0.record(result, at: index) }) {
            finish(outcome)
        }
        pull()
    }
}

private struct PullState<T> {
    enum Step {
        case pull(index: Int)
        case stop
        case finish(Result<[Result<T>]>)
    }

    let limit: Int
    let stopsOnRejection: Bool
    private var results: [Result<T>?] = []
    private var active = 0
    private var isPulling = false
    private var isExhausted = false
    private var isDecided = false

    init(limit: Int, stopsOnRejection: Bool) {
        self.limit = limit
        self.stopsOnRejection = stopsOnRejection
    }

    mutating func takeToken() -> Bool {
        guard !isPulling else { return false }
        isPulling = true
        return true
    }

    /// Decides the token holder's next move; gives the token back unless it is `.pull`.
    mutating func nextStep() -> Step {
        if !isDecided && !isExhausted && active < limit {
            active += 1
            results.append(nil)
            return .pull(index: results.count - 1)
        }
        isPulling = false
        if let outcome = outcomeIfFinished() {
            return .finish(outcome)
        }
        return .stop
    }

    /// The iterator returned `nil` for the slot reserved last.
    mutating func exhausted() -> Result<[Result<T>]>? {
        isExhausted = true
        active -= 1
        // A rejection may have decided the outcome (and emptied `results`) while the iterator ran.
        guard !isDecided else { return nil }
        results.removeLast()
        guard let outcome = outcomeIfFinished() else { return nil }
        isPulling = false
        return outcome
    }

    mutating func record(_ result: Result<T>, at index: Int) -> Result<[Result<T>]>? {
        active -= 1
        guard !isDecided else { return nil }
        results[index] = result
        if stopsOnRejection, case .rejected(let error) = result {
            isDecided = true
            results = []
            return .rejected(error)
        }
        return nil
    }

    private mutating func outcomeIfFinished() -> Result<[Result<T>]>? {
        guard !isDecided, isExhausted, active == 0 else { return nil }
        isDecided = true
        let all = results.map { $0.unsafelyUnwrapped }
        results = []
        return .fulfilled(all)
    }
}
