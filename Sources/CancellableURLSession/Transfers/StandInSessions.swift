import Foundation
import PromiseCore

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The stand-in sessions of sessions without a delegate of the app's own (``Transport``): one per session, made when
/// its first transfer that needs one starts, with the library's router as its delegate and the session's
/// configuration — and, for a session made by `withProgressReporting`, its delegate queue.
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
            // A session the app made with `withProgressReporting` named the queue its progress closures run on: its
            // stand-in runs them there too. Any other session's stand-in has a serial queue of its own: the files are
            // written on that queue, and an app's main queue is no place for them.
            let standIn = URLSession.withProgressReporting(
                configuration: owner.configuration,
                delegateQueue: owner.delegate is TransferRouter ? owner.delegateQueue : nil
            )
            entries[ObjectIdentifier(owner)] = Entry(owner: owner, session: standIn)
            return (standIn, released)
        }
        for session in released { session.finishTasksAndInvalidate() }
        return session
    }
}
