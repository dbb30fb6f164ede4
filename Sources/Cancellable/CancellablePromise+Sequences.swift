public import Dispatch
public import PromiseCore

// PromiseKit's sequence helpers, on a cancellable promise: each is one cancellable link (`map` or `then`), so
// the chain stays cancellable and cancelling the result reaches the work upstream.

extension CancellablePromise where T: Sequence {
    /// Transforms each element; the chain stays cancellable.
    ///
    /// ```swift
    /// let names = fetchUsers().mapValues { $0.name }   // CancellablePromise<[String]>
    /// names.cancel()                                   // stops fetchUsers() if it is still running
    /// ```
    public func mapValues<U>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U]> {
        map(on: on, flags: flags) { try $0.map(transform) }
    }

    /// Transforms each element into a sequence and concatenates them; the chain stays cancellable.
    ///
    /// ```swift
    /// fetchAlbums().flatMapValues { $0.tracks }   // CancellablePromise<[Track]>
    /// ```
    public func flatMapValues<U: Sequence>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U.Iterator.Element]> {
        map(on: on, flags: flags) { try $0.flatMap(transform) }
    }

    /// Transforms each element, dropping `nil`s; the chain stays cancellable.
    ///
    /// ```swift
    /// fetchStrings().compactMapValues { Int($0) }   // CancellablePromise<[Int]>
    /// ```
    public func compactMapValues<U>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U?
    ) -> CancellablePromise<[U]> {
        map(on: on, flags: flags) { try $0.compactMap(transform) }
    }

    /// Starts a promise per element and waits for all of them (like `when(fulfilled:)`); the chain stays
    /// cancellable.
    ///
    /// ```swift
    /// fetchIDs().thenMap { id in fetchUserPromise(id) }   // CancellablePromise<[User]>
    /// ```
    public func thenMap<U: Thenable>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U.T]> {
        then(on: on, flags: flags) { when(fulfilled: try $0.map(transform)) }
    }

    /// Starts a cancellable promise per element and waits for all of them. The promises belong to the chain:
    /// cancelling the result cancels those still pending, and the first failure cancels the others
    /// (`when(fulfilled:autoCancel: true)`).
    ///
    /// ```swift
    /// let users = fetchIDs().thenMap { id in download(user: id) }   // each a CancellablePromise<User>
    /// users.cancel()   // stops every download still running
    /// ```
    public func thenMap<U>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> CancellablePromise<U>
    ) -> CancellablePromise<[U]> {
        then(on: on, flags: flags) { when(fulfilled: try $0.map(transform), autoCancel: true) }
    }

    /// Starts a promise of a sequence per element, waits for all, and concatenates the results; the chain
    /// stays cancellable.
    ///
    /// ```swift
    /// fetchAlbums().thenFlatMap { album in fetchTracks(album) }   // CancellablePromise<[Track]>
    /// ```
    public func thenFlatMap<U: Thenable>(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U.T.Iterator.Element]> where U.T: Sequence {
        thenMap(on: on, flags: flags, transform).map(on: nil) { $0.flatMap { $0 } }
    }

    /// Keeps the elements that pass the test; the chain stays cancellable.
    ///
    /// ```swift
    /// fetchUsers().filterValues { $0.isActive }
    /// ```
    public func filterValues(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        _ isIncluded: @escaping (T.Iterator.Element) -> Bool
    ) -> CancellablePromise<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.filter(isIncluded) }
    }
}

extension CancellablePromise where T: Sequence, T.Iterator.Element: Comparable {
    /// Sorts the elements in increasing order; the chain stays cancellable.
    ///
    /// ```swift
    /// fetchScores().sortedValues()   // CancellablePromise<[Int]>
    /// ```
    public func sortedValues(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil
    ) -> CancellablePromise<[T.Iterator.Element]> {
        map(on: on, flags: flags) { $0.sorted() }
    }
}

extension CancellablePromise where T: Collection {
    /// The first element; rejects with `PMKError.emptySequence` if there is none. The chain stays cancellable.
    ///
    /// ```swift
    /// search(query).firstValue.done { open($0) }
    /// ```
    public var firstValue: CancellablePromise<T.Iterator.Element> {
        map(on: nil) { try $0.firstElement() }
    }

    /// The first element that passes `test`; rejects with `PMKError.emptySequence` if none does. The chain
    /// stays cancellable.
    ///
    /// ```swift
    /// search(query).firstValue(where: { $0.isExactMatch })
    /// ```
    public func firstValue(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil,
        where test: @escaping (T.Iterator.Element) -> Bool
    ) -> CancellablePromise<T.Iterator.Element> {
        map(on: on, flags: flags) { try $0.firstElement(where: test) }
    }

    /// The last element; rejects with `PMKError.emptySequence` if there is none. The chain stays cancellable.
    ///
    /// ```swift
    /// fetchMessages().lastValue.done { scroll(to: $0) }
    /// ```
    public var lastValue: CancellablePromise<T.Iterator.Element> {
        map(on: nil) { try $0.lastElement() }
    }
}
