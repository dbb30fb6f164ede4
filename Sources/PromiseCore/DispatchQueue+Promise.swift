public import Dispatch

/// Disambiguates `DispatchQueue.async(.promise) { … }` from Dispatch's own `async`.
public enum PMKNamespacer: Sendable {
    /// Selects the promise-returning `DispatchQueue.async(_:group:qos:flags:execute:)`.
    case promise
}

extension DispatchQueue {
    /// Runs `body` on this queue and returns a guarantee of its result.
    ///
    /// ```swift
    /// DispatchQueue.global().async(.promise) { expensiveComputation() }.done { show($0) }
    /// ```
    public final func async<T>(
        _: PMKNamespacer,
        group: DispatchGroup? = nil,
        qos: DispatchQoS = .default,
        flags: DispatchWorkItemFlags = [],
        execute body: sending @escaping () -> T
    ) -> Guarantee<T> {
        let box = UncheckedSendable(Guarantee<T>(state: nil))
        let work = UncheckedSendable(body)
        async(group: group, qos: qos, flags: flags) {
            box.value.resolve(.fulfilled(work.value()))
        }
        return box.value
    }

    /// Runs `body` on this queue and returns a promise of its result; throwing rejects it.
    ///
    /// ```swift
    /// DispatchQueue.global().async(.promise) { try Data(contentsOf: url) }
    /// ```
    public final func async<T>(
        _: PMKNamespacer,
        group: DispatchGroup? = nil,
        qos: DispatchQoS = .default,
        flags: DispatchWorkItemFlags = [],
        execute body: sending @escaping () throws -> T
    ) -> Promise<T> {
        let box = UncheckedSendable(Promise<T>(state: nil))
        let work = UncheckedSendable(body)
        async(group: group, qos: qos, flags: flags) {
            do {
                box.value.resolve(.fulfilled(try work.value()))
            } catch {
                box.value.resolve(.rejected(error))
            }
        }
        return box.value
    }
}
