import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a transfer of an app's session runs, and who receives its callbacks as they come: one answer for every
/// transfer the library makes.
///
/// - A session made by `URLSession.withProgressReporting(configuration:delegateQueue:)`: that session, and its
///   router.
/// - A session without a delegate (`URLSession.shared`, `URLSession(configuration:)`): on Apple platforms from
///   macOS 12 and iOS 15, that session, with a router set as each task's own delegate. Elsewhere — Linux, whose
///   FoundationNetworking never calls a task's own delegate, and Apple platforms before those versions — a stand-in
///   session with the same configuration (its cookies, credentials, headers, protocols and timeouts; no URL cache on
///   Linux, see `withProgressReporting`), made once per session and let go of when that session is released
///   (``StandInSessions``). So every kind of transfer streams on these sessions too: live progress, downloads
///   written to their partial file as bytes arrive, and nothing written elsewhere — a download task on
///   swift-corelibs-foundation leaves what it received in the temporary directory when it is cancelled.
/// - A session with a delegate of the app's own: that session, without a router. Its transfers use completion
///   handlers, so that the app's delegate keeps answering its challenges (certificate pinning, say): a download's
///   body arrives at the end, in a file the platform chooses.
struct Transport: Sendable {
    /// Where the tasks are made.
    let session: URLSession
    /// Who hands each task's callbacks to its `TransferDelegate`; `nil`: the tasks use completion handlers.
    let router: TransferRouter?

    /// Whether bytes are delivered as they arrive.
    var isLive: Bool { router != nil }
}

extension URLSession {
    /// Where this session's cancellable transfers run (``Transport``).
    var transport: Transport {
        if let router = delegate as? TransferRouter { return Transport(session: self, router: router) }
        // A background session's transfers run outside the app, and it has a delegate anyway.
        guard delegate == nil, configuration.identifier == nil else { return Transport(session: self, router: nil) }
        #if !canImport(FoundationNetworking)
        if #available(macOS 12, iOS 15, tvOS 15, watchOS 8, *) {
            return Transport(session: self, router: TransferRouter(perTask: true))
        }
        #endif
        let standIn = StandInSessions.session(for: self)
        return Transport(session: standIn, router: standIn.delegate as? TransferRouter)
    }
}

/// The stand-in sessions of sessions without a delegate (``Transport``): one per session, made when its first
/// transfer starts, with the library's router as its delegate.
///
/// A stand-in lives as long as the session it stands in for: it is let go of — invalidated once its transfers have
/// finished — the next time a stand-in is looked up after that session was released. `URLSession.shared` is never
/// released. Invalidating an app's session does not reach its stand-in's transfers: cancel them through their
/// promises.
enum StandInSessions {
    private final class Entry: @unchecked Sendable {
        // @unchecked Sendable: `owner` is a weak reference, read and written only under `entries`' lock.
        weak var owner: URLSession?
        let session: URLSession

        init(owner: URLSession, session: URLSession) {
            self.owner = owner
            self.session = session
        }
    }

    private static let entries = Locked<[ObjectIdentifier: Entry]>([:])

    /// The stand-in of `owner`, made now if it has none.
    static func session(for owner: URLSession) -> URLSession {
        let (session, released) = entries.withLock { entries -> (URLSession, [URLSession]) in
            var released: [URLSession] = []
            for (key, entry) in entries where entry.owner == nil {
                released.append(entry.session)
                entries[key] = nil
            }
            if let entry = entries[ObjectIdentifier(owner)], entry.owner === owner { return (entry.session, released) }
            let standIn = URLSession.withProgressReporting(configuration: owner.configuration)
            entries[ObjectIdentifier(owner)] = Entry(owner: owner, session: standIn)
            return (standIn, released)
        }
        for session in released { session.finishTasksAndInvalidate() }
        return session
    }

    /// How many stand-ins are alive: for tests.
    static var count: Int { entries.withLock { $0.count } }
}
