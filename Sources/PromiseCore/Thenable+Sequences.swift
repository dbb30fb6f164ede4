public import Dispatch

extension Thenable where T: Sequence {
    /// Transforms each element.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchUsers().mapValues { $0.name }   // Promise<[String]>
    /// ```
    public func mapValues<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U]> {
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
    ) -> Promise<[U]> {
        mapUnchecked(on: on, flags: flags) { try $0.map(transform) }
    }

    /// Transforms each element into a sequence and concatenates them.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchAlbums().flatMapValues { $0.tracks }   // Promise<[Track]>
    /// ```
    public func flatMapValues<U: Sequence>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U.Iterator.Element]> {
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
    ) -> Promise<[U.Iterator.Element]> {
        mapUnchecked(on: on, flags: flags) { try $0.flatMap(transform) }
    }

    /// Transforms each element, dropping `nil`s.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchStrings().compactMapValues { Int($0) }   // Promise<[Int]>
    /// ```
    public func compactMapValues<U>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> U?
    ) -> Promise<[U]> {
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
    ) -> Promise<[U]> {
        mapUnchecked(on: on, flags: flags) { try $0.compactMap(transform) }
    }

    /// Starts a promise per element and waits for all of them (like `when(fulfilled:)`).
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchIDs().thenMap { id in fetchUser(id) }   // Promise<[User]>
    /// ```
    public func thenMap<U: Thenable>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U.T]> {
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
    ) -> Promise<[U.T]> {
        thenUnchecked(on: on, flags: flags) { when(fulfilled: try $0.map(transform)) }
    }

    /// Starts a promise of a sequence per element, waits for all, and concatenates the results.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    ///
    /// ```swift
    /// fetchAlbums().thenFlatMap { album in fetchTracks(album) }   // Promise<[Track]>
    /// ```
    public func thenFlatMap<U: Thenable>(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ transform: @escaping (T.Iterator.Element) throws -> U
    ) -> Promise<[U.T.Iterator.Element]> where U.T: Sequence {
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
    ) -> Promise<[U.T.Iterator.Element]> where U.T: Sequence {
        thenUnchecked(on: on, flags: flags) { when(fulfilled: try $0.map(transform)) }
            .mapUnchecked(on: nil, flags: nil) { $0.flatMap { $0 } }
    }

    /// Keeps the elements that pass the test.
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
    ) -> Promise<[T.Iterator.Element]> {
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
    ) -> Promise<[T.Iterator.Element]> {
        mapUnchecked(on: on, flags: flags) { $0.filter(isIncluded) }
    }
}

extension Thenable where T: Sequence, T.Iterator.Element: Comparable {
    /// Sorts the elements in increasing order.
    public func sortedValues(
        on: DispatchQueue? = conf.Q.map,
        flags: DispatchWorkItemFlags? = nil
    ) -> Promise<[T.Iterator.Element]> {
        mapUnchecked(on: on, flags: flags) { $0.sorted() }
    }
}

extension Thenable where T: Collection {
    /// The first element; rejects with ``PMKError/emptySequence`` if there is none.
    ///
    /// ```swift
    /// search(query).firstValue.done { open($0) }
    /// ```
    public var firstValue: Promise<T.Iterator.Element> {
        mapUnchecked(on: nil, flags: nil) { try $0.firstElement() }
    }

    /// The first element that passes `test`; rejects with ``PMKError/emptySequence`` if none does.
    ///
    /// The body runs on the main queue if called on the main actor, otherwise on `conf.Q.map` ("Where a
    /// body runs" in "Using PromiseCore in Swift 6 apps").
    public func firstValue(
        flags: DispatchWorkItemFlags? = nil,
        isolation: isolated (any Actor)? = #isolation,
        where test: @escaping (T.Iterator.Element) -> Bool
    ) -> Promise<T.Iterator.Element> {
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
    ) -> Promise<T.Iterator.Element> {
        mapUnchecked(on: on, flags: flags) { try $0.firstElement(where: test) }
    }

    /// The last element; rejects with ``PMKError/emptySequence`` if there is none.
    public var lastValue: Promise<T.Iterator.Element> {
        mapUnchecked(on: nil, flags: nil) { try $0.lastElement() }
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
