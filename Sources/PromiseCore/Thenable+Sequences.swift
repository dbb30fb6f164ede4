public import Dispatch

extension Thenable where T: Sequence {
    /// Transforms each element.
    ///
    /// ```swift
    /// fetchUsers().mapValues { $0.name }   // Promise<[String]>
    /// ```
    public func mapValues<U>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U]> {
        map(on: on, flags: flags) { try $0.map(transform) }
    }

    /// Transforms each element into a sequence and concatenates them.
    ///
    /// ```swift
    /// fetchAlbums().flatMapValues { $0.tracks }   // Promise<[Track]>
    /// ```
    public func flatMapValues<U: Sequence>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U.Iterator.Element]> {
        map(on: on, flags: flags) { try $0.flatMap(transform) }
    }

    /// Transforms each element, dropping `nil`s.
    ///
    /// ```swift
    /// fetchStrings().compactMapValues { Int($0) }   // Promise<[Int]>
    /// ```
    public func compactMapValues<U>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U?
    ) -> Promise<[U]> {
        map(on: on, flags: flags) { try $0.compactMap(transform) }
    }

    /// Starts a promise per element and waits for all of them (like `when(fulfilled:)`).
    ///
    /// ```swift
    /// fetchIDs().thenMap { id in fetchUser(id) }   // Promise<[User]>
    /// ```
    public func thenMap<U: Thenable>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U.T]> {
        then(on: on, flags: flags) { when(fulfilled: try $0.map(transform)) }
    }

    /// Starts a promise of a sequence per element, waits for all, and concatenates the results.
    ///
    /// ```swift
    /// fetchAlbums().thenFlatMap { album in fetchTracks(album) }   // Promise<[Track]>
    /// ```
    public func thenFlatMap<U: Thenable>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U.T.Iterator.Element]> where U.T: Sequence {
        then(on: on, flags: flags) { when(fulfilled: try $0.map(transform)) }
            .map(on: nil) { $0.flatMap { $0 } }
    }

    /// Keeps the elements that pass the test.
    ///
    /// ```swift
    /// fetchUsers().filterValues { $0.isActive }
    /// ```
    public func filterValues(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ isIncluded: @escaping (T.Iterator.Element) -> Bool
    ) -> Promise<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.filter(isIncluded) }
    }
}

extension Thenable where T: Sequence, T.Iterator.Element: Comparable {
    /// Sorts the elements in increasing order.
    public func sortedValues(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil
    ) -> Promise<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.sorted() }
    }
}

extension Thenable where T: Collection {
    /// The first element; rejects with ``PMKError/emptySequence`` if there is none.
    ///
    /// ```swift
    /// search(query).firstValue.done { open($0) }
    /// ```
    public var firstValue: Promise<T.Iterator.Element> {
        map(on: nil) { try $0.firstElement() }
    }

    /// The first element that passes `test`; rejects with ``PMKError/emptySequence`` if none does.
    public func firstValue(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        where test: @escaping (T.Iterator.Element) -> Bool
    ) -> Promise<T.Iterator.Element> {
        map(on: on, flags: flags) { try $0.firstElement(where: test) }
    }

    /// The last element; rejects with ``PMKError/emptySequence`` if there is none.
    public var lastValue: Promise<T.Iterator.Element> {
        map(on: nil) { try $0.lastElement() }
    }
}

extension Collection {
    /// The first element that passes `test` (the first element, by default); throws ``PMKError/emptySequence``
    /// if none does. What `firstValue` resolves with, for plain and cancellable promises alike.
    package func firstElement(where test: (Element) -> Bool = { _ in true }) throws -> Element {
        guard let first = first(where: test) else { throw PMKError.emptySequence }
        return first
    }

    /// The last element; throws ``PMKError/emptySequence`` if there is none. What `lastValue` resolves with.
    package func lastElement() throws -> Element {
        var last: Element?
        for element in self {
            last = element
        }
        guard let last else { throw PMKError.emptySequence }
        return last
    }
}
