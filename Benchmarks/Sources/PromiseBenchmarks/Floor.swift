import Synchronization

/// "The floor": the leanest correct thread-safe promise, built from the same parts as the library's own —
/// a 4-byte lock stored inline (`Mutex`, a futex word on Linux; no `NSLock` object), plain fields, the first
/// handler stored inline and an array only for a second one — with handlers run inline (and recursively) on
/// the resolving thread. It is the physical limit of this design: PromiseCore does more (queues, errors, a
/// trampoline instead of recursion, stack-safe release, logging, Sendable policy) and should cost at most 1.2×
/// this. (The benchmarks are one module, built whole-module: the floor is specialised where it is used, as
/// `@inlinable` library code is in its client.)
///
/// Honest: first result wins; a handler added after the result runs at once; handlers run outside the lock.
///
/// Its value is stored as the class's second generic parameter, `Slot` (always `T?`), as PromiseCore's box stores
/// its state: the deinit of a generic class destroys a field whose type *is* a generic parameter with metadata it
/// already has, where a field of type `T?` would make every deinit look up `Optional<T>`'s metadata at run time.
typealias FloorPromise<T> = FloorNode<T, T?>

final class FloorNode<T, Slot>: @unchecked Sendable {
    // @unchecked Sendable: the fields are only touched under `lock`, which already makes every access exclusive:
    // the run-time exclusivity check is skipped, as it is on the library's own fields.
    private let lock = Mutex(())
    @exclusivity(unchecked) private var value: Slot
    @exclusivity(unchecked) private var first: ((T) -> Void)?
    @exclusivity(unchecked) private var more: [(T) -> Void] = []

    init() where Slot == T? {
        value = nil
    }

    init(value: T) where Slot == T? {
        self.value = value
    }
}

extension FloorNode where Slot == T? {

    func fulfill(_ newValue: T) {
        var waiting: ((T) -> Void)?
        var others: [(T) -> Void] = []
        let won = lock.withLock { _ -> Bool in
            guard value == nil else { return false }
            value = newValue
            waiting = first.take()
            swap(&others, &more)
            return true
        }
        guard won else { return }
        waiting?(newValue)
        for handler in others { handler(newValue) }
    }

    func whenFulfilled(_ handler: @escaping (T) -> Void) {
        var resolved: T?
        lock.withLock { _ in
            if let value {
                resolved = value
            } else if first == nil {
                first = handler
            } else {
                more.append(handler)
            }
        }
        if let resolved { handler(resolved) }
    }

    func map<U>(_ transform: @escaping (T) -> U) -> FloorPromise<U> {
        let next = FloorPromise<U>()
        whenFulfilled { next.fulfill(transform($0)) }
        return next
    }

    var current: T? {
        var current: T?
        lock.withLock { _ in current = value }
        return current
    }

    /// Waits for every promise; values in input order.
    static func all(_ promises: [FloorPromise<T>]) -> FloorPromise<[T]> {
        let result = FloorPromise<[T]>()
        guard !promises.isEmpty else {
            result.fulfill([])
            return result
        }
        let gathering = Gathering<T>(count: promises.count)
        for (index, promise) in promises.enumerated() {
            promise.whenFulfilled { value in
                if let values = gathering.put(value, at: index) { result.fulfill(values) }
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

/// The values of `all`, gathered under one lock; the last one in hands them over.
final class Gathering<T>: @unchecked Sendable {
    // @unchecked Sendable: the fields are only touched under `lock`, which already makes every access exclusive:
    // the run-time exclusivity check is skipped, as it is on the library's own fields.
    private let lock = Mutex(())
    @exclusivity(unchecked) private var values: [T?]
    @exclusivity(unchecked) private var remaining: Int

    init(count: Int) {
        values = [T?](repeating: nil, count: count)
        remaining = count
    }

    /// Stores `value`; returns every value once the last one is in.
    func put(_ value: T, at index: Int) -> [T]? {
        var complete: [T?]?
        lock.withLock { _ in
            values[index] = value
            remaining -= 1
            if remaining == 0 { complete = values }
        }
        return complete.map { $0.map { $0.unsafelyUnwrapped } }
    }
}
