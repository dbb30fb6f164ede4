public import Dispatch

extension Guarantee where T: Sequence {
    /// Transforms each element.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// Guarantee.value([1, 2, 3]).mapValues { $0 * 2 }   // Guarantee<[Int]>
    /// ```
    public func mapValues<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U]> {
        nonisolated(unsafe) let transform = transform
        return self.mapValues(
            on: defaultQueue(conf.Q.map, for: isolation, calling: "mapValues"),
            flags: flags,
            transform
        )
    }

    /// `mapValues` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUsers().mapValues(on: .global()) { $0.name }
    /// ```
    public func mapValues<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: sending @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U]> {
        mapUnchecked(on: on, flags: flags) { $0.map(transform) }
    }

    /// Transforms each element into a sequence and concatenates them.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    public func flatMapValues<U: Sequence>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U.Iterator.Element]> {
        nonisolated(unsafe) let transform = transform
        return self.flatMapValues(
            on: defaultQueue(conf.Q.map, for: isolation, calling: "flatMapValues"),
            flags: flags,
            transform
        )
    }

    /// `flatMapValues` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUsers().flatMapValues(on: .global()) { $0.emails }
    /// ```
    public func flatMapValues<U: Sequence>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: sending @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U.Iterator.Element]> {
        mapUnchecked(on: on, flags: flags) { $0.flatMap(transform) }
    }

    /// Transforms each element, dropping `nil`s.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    public func compactMapValues<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) -> U?
    ) -> Guarantee<[U]> {
        nonisolated(unsafe) let transform = transform
        return self.compactMapValues(
            on: defaultQueue(conf.Q.map, for: isolation, calling: "compactMapValues"),
            flags: flags,
            transform
        )
    }

    /// `compactMapValues` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchLines().compactMapValues(on: .global()) { Int($0) }
    /// ```
    public func compactMapValues<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: sending @escaping (T.Iterator.Element) -> U?
    ) -> Guarantee<[U]> {
        mapUnchecked(on: on, flags: flags) { $0.compactMap(transform) }
    }

    /// Starts a guarantee per element and waits for all of them.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// Guarantee.value([1, 2]).thenMap { after(seconds: Double($0)).map { _ in $0 } }
    /// ```
    public func thenMap<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) -> Guarantee<U>
    ) -> Guarantee<[U]> {
        nonisolated(unsafe) let transform = transform
        return self.thenMap(on: defaultQueue(conf.Q.map, for: isolation, calling: "thenMap"), flags: flags, transform)
    }

    /// `thenMap` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchIDs().thenMap(on: .global()) { id in fetchUser(id) }
    /// ```
    public func thenMap<U>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: sending @escaping (T.Iterator.Element) -> Guarantee<U>
    ) -> Guarantee<[U]> {
        thenUnchecked(on: on, flags: flags) { when(guarantees: $0.map(transform)) }
    }

    /// Starts a guarantee of a sequence per element, waits for all, and concatenates the results.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    public func thenFlatMap<U: Thenable>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U.T.Iterator.Element]> where U.T: Sequence {
        nonisolated(unsafe) let transform = transform
        return self.thenFlatMap(
            on: defaultQueue(conf.Q.map, for: isolation, calling: "thenFlatMap"),
            flags: flags,
            transform
        )
    }

    /// `thenFlatMap` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchIDs().thenFlatMap(on: .global()) { id in fetchEmails(id) }
    /// ```
    public func thenFlatMap<U: Thenable>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: sending @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U.T.Iterator.Element]> where U.T: Sequence {
        thenUnchecked(on: on, flags: flags) { values in
            when(guarantees: values.map { Guarantee<U.T>(assumingSuccessOf: transform($0)) })
        }
        .mapUnchecked(on: nil, flags: nil) { $0.flatMap { $0 } }
    }

    /// Keeps the elements that pass the test.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    public func filterValues(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ isIncluded: @escaping (T.Iterator.Element) -> Bool
    ) -> Guarantee<[T.Iterator.Element]> {
        nonisolated(unsafe) let isIncluded = isIncluded
        return self.filterValues(
            on: defaultQueue(conf.Q.map, for: isolation, calling: "filterValues"),
            flags: flags,
            isIncluded
        )
    }

    /// `filterValues` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUsers().filterValues(on: .global()) { $0.isActive }
    /// ```
    public func filterValues(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ isIncluded: sending @escaping (T.Iterator.Element) -> Bool
    ) -> Guarantee<[T.Iterator.Element]> {
        mapUnchecked(on: on, flags: flags) { $0.filter(isIncluded) }
    }

    /// Sorts the elements with `areInIncreasingOrder`.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    public func sortedValues(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ areInIncreasingOrder: @escaping (T.Iterator.Element, T.Iterator.Element) -> Bool
    ) -> Guarantee<[T.Iterator.Element]> {
        nonisolated(unsafe) let areInIncreasingOrder = areInIncreasingOrder
        return self.sortedValues(
            on: defaultQueue(conf.Q.map, for: isolation, calling: "sortedValues"),
            flags: flags,
            areInIncreasingOrder
        )
    }

    /// `sortedValues` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchScores().sortedValues(on: .global())
    /// ```
    public func sortedValues(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ areInIncreasingOrder: sending @escaping (T.Iterator.Element, T.Iterator.Element) -> Bool
    ) -> Guarantee<[T.Iterator.Element]> {
        mapUnchecked(on: on, flags: flags) { $0.sorted(by: areInIncreasingOrder) }
    }
}

extension Guarantee where T: Sequence, T.Iterator.Element: Comparable {
    /// Sorts the elements in increasing order.
    public func sortedValues(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil
    ) -> Guarantee<[T.Iterator.Element]> {
        mapUnchecked(on: on, flags: flags) { $0.sorted() }
    }
}
