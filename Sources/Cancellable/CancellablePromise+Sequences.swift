public import Dispatch
public import PromiseCore

// PromiseKit's sequence helpers, on a cancellable promise: each is one cancellable link (`map` or `then`), so
// the chain stays cancellable and cancelling the result reaches the work upstream.

extension CancellablePromise where T: Sequence {
    /// Transforms each element; the chain stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// let names = fetchUsers().mapValues { $0.name }   // CancellablePromise<[String]>
    /// names.cancel()                                   // stops fetchUsers() if it is still running
    /// ```
    public func mapValues<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U]> {
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
        _ transform: sending @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U]> {
        mapUnchecked(on: on, flags: flags) { try $0.map(transform) }
    }

    /// Transforms each element into a sequence and concatenates them; the chain stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchAlbums().flatMapValues { $0.tracks }   // CancellablePromise<[Track]>
    /// ```
    public func flatMapValues<U: Sequence>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U.Iterator.Element]> {
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
        _ transform: sending @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U.Iterator.Element]> {
        mapUnchecked(on: on, flags: flags) { try $0.flatMap(transform) }
    }

    /// Transforms each element, dropping `nil`s; the chain stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchStrings().compactMapValues { Int($0) }   // CancellablePromise<[Int]>
    /// ```
    public func compactMapValues<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> U?
    ) -> CancellablePromise<[U]> {
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
        _ transform: sending @escaping (T.Iterator.Element) throws -> U?
    ) -> CancellablePromise<[U]> {
        mapUnchecked(on: on, flags: flags) { try $0.compactMap(transform) }
    }

    /// Starts a promise per element and waits for all of them (like `when(fulfilled:)`); the chain stays
    /// cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchIDs().thenMap { id in fetchUserPromise(id) }   // CancellablePromise<[User]>
    /// ```
    public func thenMap<U: Thenable>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U.T]> {
        nonisolated(unsafe) let transform = transform
        return self.thenMap(on: defaultQueue(conf.Q.map, for: isolation, calling: "thenMap"), flags: flags, transform)
    }

    /// `thenMap` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchIDs().thenMap(on: .global()) { id in fetchUser(id) }
    /// ```
    public func thenMap<U: Thenable>(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        _ transform: sending @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U.T]> {
        thenFollowing(on: on, flags: flags) { when(fulfilled: try $0.map(transform)) }
    }

    /// Starts a cancellable promise per element and waits for all of them. The promises belong to the chain:
    /// cancelling the result cancels those still pending, and the first failure cancels the others
    /// (`when(fulfilled:autoCancel: true)`).
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// let users = fetchIDs().thenMap { id in download(user: id) }   // each a CancellablePromise<User>
    /// users.cancel()   // stops every download still running
    /// ```
    public func thenMap<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> CancellablePromise<U>
    ) -> CancellablePromise<[U]> {
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
        _ transform: sending @escaping (T.Iterator.Element) throws -> CancellablePromise<U>
    ) -> CancellablePromise<[U]> {
        thenFollowing(on: on, flags: flags) { when(fulfilled: try $0.map(transform), autoCancel: true) }
    }

    /// Starts a promise of a sequence per element, waits for all, and concatenates the results; the chain
    /// stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchAlbums().thenFlatMap { album in fetchTracks(album) }   // CancellablePromise<[Track]>
    /// ```
    public func thenFlatMap<U: Thenable>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U.T.Iterator.Element]> where U.T: Sequence {
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
        _ transform: sending @escaping (T.Iterator.Element) throws -> U
    ) -> CancellablePromise<[U.T.Iterator.Element]> where U.T: Sequence {
        thenMap(on: on, flags: flags, transform).mapUnchecked(on: nil, flags: nil) { $0.flatMap { $0 } }
    }

    /// Keeps the elements that pass the test; the chain stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUsers().filterValues { $0.isActive }
    /// ```
    public func filterValues(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ isIncluded: @escaping (T.Iterator.Element) -> Bool
    ) -> CancellablePromise<[T.Iterator.Element]> {
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
    ) -> CancellablePromise<[T.Iterator.Element]> {
        mapUnchecked(on: on, flags: flags) { $0.filter(isIncluded) }
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
        mapUnchecked(on: on, flags: flags) { $0.sorted() }
    }
}

extension CancellablePromise where T: Collection {
    /// The first element; rejects with `PMKError.emptySequence` if there is none. The chain stays cancellable.
    ///
    /// ```swift
    /// search(query).firstValue.done { open($0) }
    /// ```
    public var firstValue: CancellablePromise<T.Iterator.Element> {
        mapUnchecked(on: nil, flags: nil) { try $0.firstElement() }
    }

    /// The first element that passes `test`; rejects with `PMKError.emptySequence` if none does. The chain
    /// stays cancellable.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// search(query).firstValue(where: { $0.isExactMatch })
    /// ```
    public func firstValue(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        where test: @escaping (T.Iterator.Element) -> Bool
    ) -> CancellablePromise<T.Iterator.Element> {
        nonisolated(unsafe) let test = test
        return self.firstValue(
            on: defaultQueue(conf.Q.map, for: isolation, calling: "firstValue"),
            flags: flags,
            where: test
        )
    }

    /// `firstValue` with its body run on `on`: a queue, or `nil` to run it inline on the thread that
    /// resolves the promise. Such a body is `sending` (see "Where a body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUsers().firstValue(on: .global()) { $0.isAdmin }
    /// ```
    public func firstValue(
        on: DispatchQueue?,
        flags: DispatchWorkItemFlags? = nil,
        where test: sending @escaping (T.Iterator.Element) -> Bool
    ) -> CancellablePromise<T.Iterator.Element> {
        mapUnchecked(on: on, flags: flags) { try $0.firstElement(where: test) }
    }

    /// The last element; rejects with `PMKError.emptySequence` if there is none. The chain stays cancellable.
    ///
    /// ```swift
    /// fetchMessages().lastValue.done { scroll(to: $0) }
    /// ```
    public var lastValue: CancellablePromise<T.Iterator.Element> {
        mapUnchecked(on: nil, flags: nil) { try $0.lastElement() }
    }
}
