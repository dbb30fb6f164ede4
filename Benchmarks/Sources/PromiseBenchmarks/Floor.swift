import Foundation

/// "The floor": the simplest correct thread-safe promise — one lock, plain fields, handlers run inline (and
/// recursively) on the resolving thread. It stands for the physical limit of this design: PromiseCore does
/// more (queues, errors, a trampoline instead of recursion, logging, Sendable policy) and should cost at most
/// 1.2× this.
final class FloorPromise<T>: @unchecked Sendable {
    // @unchecked Sendable: `value` and `handlers` are only touched under `lock`.
    private let lock = NSLock()
    private var value: T?
    private var handlers: [(T) -> Void] = []

    init() {}

    init(value: T) {
        self.value = value
    }

    func fulfill(_ newValue: T) {
        lock.lock()
        guard value == nil else {
            lock.unlock()
            return
        }
        value = newValue
        let waiting = handlers
        handlers = []
        lock.unlock()
        for handler in waiting {
            handler(newValue)
        }
    }

    func whenFulfilled(_ handler: @escaping (T) -> Void) {
        lock.lock()
        if let value {
            lock.unlock()
            handler(value)
            return
        }
        handlers.append(handler)
        lock.unlock()
    }

    func map<U>(_ transform: @escaping (T) -> U) -> FloorPromise<U> {
        let next = FloorPromise<U>()
        whenFulfilled { next.fulfill(transform($0)) }
        return next
    }

    var current: T? {
        lock.lock()
        defer { lock.unlock() }
        return value
    }

    /// Waits for every promise; values in input order.
    static func all(_ promises: [FloorPromise<T>]) -> FloorPromise<[T]> {
        let result = FloorPromise<[T]>()
        guard !promises.isEmpty else {
            result.fulfill([])
            return result
        }
        let lock = NSLock()
        var values = [T?](repeating: nil, count: promises.count)
        var remaining = promises.count
        for (index, promise) in promises.enumerated() {
            promise.whenFulfilled { value in
                lock.lock()
                values[index] = value
                remaining -= 1
                let done = remaining == 0
                lock.unlock()
                if done { result.fulfill(values.map { $0! }) }
            }
        }
        return result
    }

    /// The first to fulfill.
    static func race(_ promises: [FloorPromise<T>]) -> FloorPromise<T> {
        let result = FloorPromise<T>()
        for promise in promises {
            promise.whenFulfilled(result.fulfill)
        }
        return result
    }
}
