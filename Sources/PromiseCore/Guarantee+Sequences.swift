public import Dispatch

extension Guarantee where T: Sequence {
    /// Transforms each element.
    ///
    /// ```swift
    /// Guarantee.value([1, 2, 3]).mapValues { $0 * 2 }   // Guarantee<[Int]>
    /// ```
    public func mapValues<U>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U]> {
        map(on: on, flags: flags) { $0.map(transform) }
    }

    /// Transforms each element into a sequence and concatenates them.
    public func flatMapValues<U: Sequence>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U.Iterator.Element]> {
        map(on: on, flags: flags) { $0.flatMap(transform) }
    }

    /// Transforms each element, dropping `nil`s.
    public func compactMapValues<U>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) -> U?
    ) -> Guarantee<[U]> {
        map(on: on, flags: flags) { $0.compactMap(transform) }
    }

    /// Starts a guarantee per element and waits for all of them.
    ///
    /// ```swift
    /// Guarantee.value([1, 2]).thenMap { after(seconds: Double($0)).map { _ in $0 } }
    /// ```
    public func thenMap<U>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) -> Guarantee<U>
    ) -> Guarantee<[U]> {
        then(on: on, flags: flags) { when(guarantees: $0.map(transform)) }
    }

    /// Starts a guarantee of a sequence per element, waits for all, and concatenates the results.
    public func thenFlatMap<U: Thenable>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) -> U
    ) -> Guarantee<[U.T.Iterator.Element]> where U.T: Sequence {
        then(on: on, flags: flags) { values in
            when(guarantees: values.map { Guarantee<U.T>(assumingSuccessOf: transform($0)) })
        }
        .map(on: nil) { $0.flatMap { $0 } }
    }

    /// Keeps the elements that pass the test.
    public func filterValues(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ isIncluded: @escaping (T.Iterator.Element) -> Bool
    ) -> Guarantee<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.filter(isIncluded) }
    }

    /// Sorts the elements with `areInIncreasingOrder`.
    public func sortedValues(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ areInIncreasingOrder: @escaping (T.Iterator.Element, T.Iterator.Element) -> Bool
    ) -> Guarantee<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.sorted(by: areInIncreasingOrder) }
    }
}

extension Guarantee where T: Sequence, T.Iterator.Element: Comparable {
    /// Sorts the elements in increasing order.
    public func sortedValues(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil
    ) -> Guarantee<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.sorted() }
    }
}
